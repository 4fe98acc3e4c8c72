package sqlite

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"iter"
	"strconv"

	"github.com/dshctl/dshctl/internal/rawjson"

	"github.com/dshctl/dshctl/internal/seam"
)

var _ seam.RawReader = (*handle)(nil)

// Raw streams the session's rows exactly as stored, for `cat --raw`: first
// the sessions row, then every events row in seq order, each as one JSON
// object of its columns, named as in the database, NULL columns left out.
// A TEXT column that holds valid JSON is written as that JSON, any other
// TEXT as a string; a BLOB column gets the suffix "_base64" and its bytes
// in base64 (a zstd payload, a varint list). Nothing is decoded or checked.
func (h *handle) Raw(ctx context.Context) iter.Seq2[seam.RawRecord, error] {
	return func(yield func(seam.RawRecord, error) bool) {
		if err := h.use("raw"); err != nil {
			yield(seam.RawRecord{}, err)
			return
		}
		if h.unborn() {
			return
		}
		s := h.s
		r, found, err := s.loadSession(ctx, h.reader(), h.id)
		if err != nil || !found {
			if err == nil {
				err = seam.NotFound("raw", h.id)
			}
			yield(seam.RawRecord{}, s.sqlErr("raw", h.id, err))
			return
		}
		var off int64
		emit := func(line []byte, events int) bool {
			line = append(line, '\n')
			rec := seam.RawRecord{Line: line, Offset: off, Events: events}
			off += int64(len(line))
			return yield(rec, nil)
		}
		if !emit(r.appendRawJSON(nil), 0) {
			return
		}
		for row, err := range s.RawRows(ctx, h.id) {
			if err != nil {
				yield(seam.RawRecord{}, err)
				return
			}
			if !emit(row.appendRawJSON(nil), rowEvents(&row, s.schema)) {
				return
			}
		}
	}
}

// rowEvents is the number of events an events row stands for
// (seam.RawRecord.Events): the members of a packed row, else one.
func rowEvents(r *RawRow, schema int) int {
	if schema == Schema17 && r.Ignorable == 0 {
		if rec, err := decodePackedRow(r, 0); err == nil && rec.Packed != nil {
			return len(rec.Packed.Parts)
		}
	}
	return 1
}

// appendRawJSON appends the sessions row as a JSON object of its columns.
func (r *sessionRow) appendRawJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = rawjson.AppendString(dst, r.id)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, r.version, 10)
	dst = append(dst, `,"created_at":`...)
	dst = strconv.AppendInt(dst, r.createdAt, 10)
	for _, c := range []struct {
		key string
		val *string
	}{{"cwd", nullStr(r.cwd.String, r.cwd.Valid)}, {"parent_session", nullStr(r.parent.String, r.parent.Valid)}} {
		dst = appendOptString(dst, c.key, c.val)
	}
	if r.seedLength.Valid {
		dst = append(dst, `,"seed_length":`...)
		dst = strconv.AppendInt(dst, r.seedLength.Int64, 10)
	}
	dst = appendOptString(dst, "origin", nullStr(r.origin.String, r.origin.Valid))
	if r.depth.Valid {
		dst = append(dst, `,"delegation_depth":`...)
		dst = strconv.AppendInt(dst, r.depth.Int64, 10)
	}
	dst = appendOptString(dst, "agent_preset", nullStr(r.preset.String, r.preset.Valid))
	dst = appendOptString(dst, "incarnation", &r.incarnation)
	dst = append(dst, `,"revision":`...)
	dst = strconv.AppendInt(dst, r.revision, 10)
	return append(dst, '}')
}

func nullStr(s string, valid bool) *string {
	if !valid {
		return nil
	}
	return &s
}

func appendOptString(dst []byte, key string, val *string) []byte {
	if val == nil {
		return dst
	}
	dst = append(dst, `,"`+key+`":`...)
	return rawjson.AppendString(dst, *val)
}

// appendRawJSON appends the row as a JSON object of its columns.
func (r *RawRow) appendRawJSON(dst []byte) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, r.Seq, 10)
	dst = append(dst, `,"type":`...)
	dst = rawjson.AppendString(dst, r.Type)
	dst = append(dst, `,"time":`...)
	dst = strconv.AppendInt(dst, r.Time, 10)
	dst = appendColumn(dst, "data", r.Data, r.DataBlob)
	if r.Seqs != nil {
		dst = appendColumn(dst, "source_event_seqs", r.Seqs, r.SeqsBlob)
	}
	if r.SurfaceOp != nil {
		dst = appendColumn(dst, "surface_op", r.SurfaceOp, false)
	}
	if r.Ignorable >= 0 {
		dst = append(dst, `,"ignorable":`...)
		dst = strconv.AppendInt(dst, r.Ignorable, 10)
	}
	return append(dst, '}')
}

func appendColumn(dst []byte, key string, val []byte, blob bool) []byte {
	switch {
	case blob:
		dst = append(dst, `,"`+key+`_base64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, val)
		return append(dst, '"')
	case json.Valid(val):
		// Compact, so that no record spans lines.
		var b bytes.Buffer
		json.Compact(&b, val)
		dst = append(dst, `,"`+key+`":`...)
		return append(dst, b.Bytes()...)
	}
	dst = append(dst, `,"`+key+`":`...)
	return rawjson.AppendString(dst, string(val))
}

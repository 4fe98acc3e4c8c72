package seam

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// Event is one logical event: what `cat` prints and `export` writes. Packed
// rows are expanded and sourceEventSeqs range pairs are expanded.
type Event struct {
	Type string
	Seq  int64
	Time int64
	// Data is the payload, a compact JSON object.
	Data json.RawMessage
	// Ignorable lets a reader that does not know Type skip the event.
	Ignorable bool
	// SurfaceOp is the compact JSON of the surface op; nil when absent.
	SurfaceOp json.RawMessage
	// SourceEventSeqs is nil when absent; its order is meaningful.
	SourceEventSeqs []int64
}

// AppendJSON appends the canonical JSON of e: keys in dsh's order type,
// seq, time, data, ignorable, sourceEventSeqs, surfaceOp, optional ones
// omitted, sourceEventSeqs expanded. It is the logical event as dsh's reader
// returns it.
func (e *Event) AppendJSON(dst []byte) []byte { return e.appendJSON(dst, false) }

// AppendRecordJSON appends the physical record of e in a version-v log: as
// AppendJSON, but from v2 on sourceEventSeqs is range-encoded (see
// AppendSourceSeqsV2).
func (e *Event) AppendRecordJSON(dst []byte, v int) []byte { return e.appendJSON(dst, v >= 2) }

func (e *Event) appendJSON(dst []byte, ranges bool) []byte {
	dst = e.appendHead(dst)
	if len(e.Data) == 0 {
		dst = append(dst, "{}"...)
	} else {
		dst = append(dst, e.Data...)
	}
	dst = e.appendMiddle(dst, ranges)
	if e.SurfaceOp != nil {
		dst = append(dst, e.SurfaceOp...)
	}
	return append(dst, '}')
}

// AppendJSONParts is AppendJSON for a writer that streams a large event
// without copying its payloads: it appends the text around data and
// surfaceOp to dst and returns the canonical JSON of e as the pieces to
// write in order: the text before data, data, the text between, surfaceOp
// (nil when absent) and the closing brace. Data and surfaceOp alias e.
func (e *Event) AppendJSONParts(dst []byte) ([]byte, [5][]byte) {
	i := len(dst)
	dst = e.appendHead(dst)
	j := len(dst)
	dst = e.appendMiddle(dst, false)
	k := len(dst)
	dst = append(dst, '}')
	data := []byte(e.Data)
	if len(data) == 0 {
		data = []byte("{}")
	}
	return dst, [5][]byte{dst[i:j:j], data, dst[j:k:k], e.SurfaceOp, dst[k:]}
}

// appendHead appends the members before data's value.
func (e *Event) appendHead(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = rawjson.AppendString(dst, e.Type)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, `,"time":`...)
	dst = strconv.AppendInt(dst, e.Time, 10)
	return append(dst, `,"data":`...)
}

// appendMiddle appends the members between data's value and surfaceOp's.
func (e *Event) appendMiddle(dst []byte, ranges bool) []byte {
	if e.Ignorable {
		dst = append(dst, `,"ignorable":true`...)
	}
	if e.SourceEventSeqs != nil {
		dst = append(dst, `,"sourceEventSeqs":`...)
		if ranges {
			dst = AppendSourceSeqsV2(dst, e.SourceEventSeqs)
		} else {
			dst = append(dst, '[')
			for i, s := range e.SourceEventSeqs {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = strconv.AppendInt(dst, s, 10)
			}
			dst = append(dst, ']')
		}
	}
	if e.SurfaceOp != nil {
		dst = append(dst, `,"surfaceOp":`...)
	}
	return dst
}

// MarshalJSON returns the canonical JSON of e.
func (e Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// compactValid returns a copy of the valid JSON value raw in compact form;
// compact tells that raw is compact already.
func compactValid(raw []byte, compact bool) json.RawMessage {
	if compact {
		return bytes.Clone(raw)
	}
	return rawjson.AppendCompact(make([]byte, 0, len(raw)), raw)
}

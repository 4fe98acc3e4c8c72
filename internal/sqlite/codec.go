package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/klauspost/compress/zstd"
)

// Schema versions (PRAGMA user_version) of dsh's SQLite store.
const (
	Schema14 = 14 // one row per event, JSON text
	Schema17 = 17 // packed chunk rows, zstd payloads, varint sourceEventSeqs
)

const (
	// compressMin is the smallest JSON payload schema 17 stores as a zstd
	// frame (when the frame is smaller).
	compressMin = 4 << 10
	// maxPayload bounds the decoded size of one zstd payload, so that a
	// hostile BLOB cannot make a reader allocate without bound.
	maxPayload = 256 << 20
	// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER.
	maxSafeInteger = 1<<53 - 1
)

// RawRow is one row of the events table as stored, before decoding: what
// `cat --raw` and verify show of a SQLite session. Rows yielded by a scan
// alias buffers that the next row reuses; RawRows yields copies.
type RawRow struct {
	Seq, Time int64
	Type      string
	// Data is the data column: JSON text, or with DataBlob a zstd frame
	// of it (schema 17).
	Data     []byte
	DataBlob bool
	// Seqs is source_event_seqs, nil when NULL: JSON text (schema 14) or,
	// with SeqsBlob, the varint list (schema 17).
	Seqs     []byte
	SeqsBlob bool
	// SurfaceOp is surface_op, nil when NULL.
	SurfaceOp []byte
	// Ignorable is the schema-17 column: -1 when NULL (and in schema 14),
	// else its value; 0 marks a packed row.
	Ignorable int64

	// inflated marks a BLOB data column that the reader of the row
	// decompressed already (see prefetcher): plain holds its JSON, or
	// plainErr why there is none.
	inflated bool
	plain    []byte
	plainErr error
}

// payload returns the JSON a schema-17 BLOB data column holds.
func (r *RawRow) payload() ([]byte, error) {
	if r.inflated {
		return r.plain, r.plainErr
	}
	return decompress(nil, r.Data)
}

// tornable reports whether r, when it is a session's final row and does
// not decode, is a torn tail rather than damaged committed data: only a
// packed row can be (store.md 6; a scalar row is inserted in one
// transaction, whole, so a bad one was written or damaged that way).
func (s *Store) tornable(r *RawRow) bool {
	return s.schema == Schema17 && r.Ignorable == 0
}

// repair describes the removal of r, a torn row of the database at path,
// saved to backup.
func (r *RawRow) repair(path, backup string) seam.Repair {
	seq := r.Seq
	return seam.Repair{Path: path, Offset: -1, Bytes: r.size(), Kind: seam.RepairTorn, Backup: backup, Seq: &seq}
}

// size is the row's physical size, for scan budgets and repairs.
func (r *RawRow) size() int64 {
	return int64(len(r.Data) + len(r.Seqs) + len(r.SurfaceOp) + len(r.Type) + 24)
}

// decodeRow decodes and validates one row of a session of log format v in
// a database of the given schema. It returns ErrCorrupt errors without a
// position; vocabulary and contiguity are the caller's. With alias, the
// event's Data and SurfaceOp may alias r's buffers (see
// seam.DecodeStoredEventAlias).
func decodeRow(r *RawRow, schema, v int, alias bool) (seam.Record, error) {
	var rec seam.Record
	if r.Type == "" || !utf8.ValidString(r.Type) {
		return rec, corruptf("row seq %d: type %q is empty or not UTF-8", r.Seq, r.Type)
	}
	if schema == Schema17 && r.Ignorable == 0 {
		return decodePackedRow(r, v)
	}
	data := r.Data
	switch {
	case r.DataBlob && schema == Schema17:
		var err error
		if data, err = r.payload(); err != nil {
			return rec, corruptf("row seq %d: data: %v", r.Seq, err)
		}
	case r.DataBlob:
		return rec, corruptf("row seq %d: data is a BLOB in a schema-%d database", r.Seq, schema)
	}
	var seqs []int64
	if r.Seqs != nil {
		var err error
		switch {
		case schema == Schema17 && r.SeqsBlob:
			seqs, err = decodeSourceSeqs(r.Seqs)
		case schema == Schema14 && !r.SeqsBlob:
			seqs, err = seam.DecodeSourceSeqs(r.Seqs, v)
		default:
			err = fmt.Errorf("not a schema-%d list", schema)
		}
		if err != nil {
			return rec, corruptf("row seq %d: source_event_seqs: %v", r.Seq, causeOf(err))
		}
	}
	ignorable := false
	switch r.Ignorable {
	case -1:
	case 1:
		ignorable = true
	default:
		return rec, corruptf("row seq %d: ignorable is %d", r.Seq, r.Ignorable)
	}
	decode := seam.DecodeStoredEvent
	if alias {
		decode = seam.DecodeStoredEventAlias
	}
	e, err := decode(r.Type, r.Seq, r.Time, data, r.SurfaceOp, ignorable, seqs, v)
	if err != nil {
		return rec, err
	}
	rec.Event = e
	return rec, nil
}

// decodePackedRow decodes a schema-17 packed row (ignorable = 0).
func decodePackedRow(r *RawRow, v int) (seam.Record, error) {
	var rec seam.Record
	if v >= 2 {
		return rec, corruptf("packed row %q at seq %d in a v%d session", r.Type, r.Seq, v)
	}
	if r.Seqs != nil || r.SurfaceOp != nil {
		return rec, corruptf("packed row seq %d: source_event_seqs and surface_op must be NULL", r.Seq)
	}
	payload := r.Data
	if r.DataBlob {
		var err error
		if payload, err = r.payload(); err != nil {
			return rec, corruptf("packed row seq %d: data: %v", r.Seq, err)
		}
	}
	if len(payload) > seam.MaxPackedPayload {
		return rec, corruptf("packed row seq %d: payload of %d bytes exceeds %d", r.Seq, len(payload), seam.MaxPackedPayload)
	}
	p, err := seam.DecodePacked(r.Type, r.Seq, r.Time, payload)
	if err != nil {
		return rec, err
	}
	if len(p.Parts) > seam.MaxPackedMembers {
		return rec, corruptf("packed row seq %d: %d members exceed %d", r.Seq, len(p.Parts), seam.MaxPackedMembers)
	}
	rec.Packed = p
	return rec, nil
}

// row is one row of the events table to insert.
type row struct {
	seq, time int64
	typ       string
	data      any // string (TEXT) or []byte (zstd BLOB)
	seqs      any // nil, string (schema 14) or []byte (schema 17)
	surfaceOp any // nil or string
	ignorable any // nil, 0 or 1 (schema 17)
}

// encodeRows returns the rows that store a validated batch of a version-v
// session in a database of the given schema. Schema 17 packs runs of chunk
// events of v0/v1 sessions (seam.PackChunks) and compresses the large
// payloads of scalar rows.
func encodeRows(events []seam.Event, schema, v int) ([]row, error) {
	if schema == Schema14 {
		out := make([]row, len(events))
		for i := range events {
			e := &events[i]
			if e.Ignorable {
				return nil, fmt.Errorf("event %d (seq %d, %s) is ignorable, which a schema-14 database cannot store", i, e.Seq, e.Type)
			}
			out[i] = row{seq: e.Seq, time: e.Time, typ: e.Type, data: string(e.Data), surfaceOp: textOrNil(e.SurfaceOp)}
			if e.SourceEventSeqs != nil {
				out[i].seqs = string(appendSeqsJSON(nil, e.SourceEventSeqs))
			}
		}
		return out, nil
	}
	recs := []seam.Record{}
	if v < 2 {
		recs = seam.PackChunks(events, seam.MaxPackedMembers, seam.MaxPackedPayload)
	} else {
		for _, e := range events {
			recs = append(recs, seam.Record{Event: e})
		}
	}
	out := make([]row, len(recs))
	for i := range recs {
		if p := recs[i].Packed; p != nil {
			// A packed payload stays JSON text: store.md 6 compresses the
			// data of scalar rows only. Readers take either.
			out[i] = row{seq: p.Seq0, time: p.Time0, typ: p.Kind, data: string(p.AppendPayloadJSON(nil)), ignorable: 0}
			continue
		}
		e := &recs[i].Event
		out[i] = row{seq: e.Seq, time: e.Time, typ: e.Type, data: payload(e.Data), surfaceOp: textOrNil(e.SurfaceOp)}
		if e.SourceEventSeqs != nil {
			out[i].seqs = appendSourceSeqs(make([]byte, 0, 2*len(e.SourceEventSeqs)), e.SourceEventSeqs)
		}
		if e.Ignorable {
			out[i].ignorable = 1
		}
	}
	return out, nil
}

func textOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func appendSeqsJSON(dst []byte, seqs []int64) []byte {
	dst = append(dst, '[')
	for i, s := range seqs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, s, 10)
	}
	return append(dst, ']')
}

// payload returns how schema 17 stores the JSON text: as TEXT, or as a zstd
// level-3 frame BLOB when the text is at least compressMin bytes and the
// frame is smaller.
func payload(text []byte) any {
	if len(text) >= compressMin {
		if c := compress(text); len(c) < len(text) {
			return c
		}
	}
	return string(text)
}

// appendSourceSeqs appends the schema-17 form of a sourceEventSeqs list:
// the first seq as an unsigned varint, then each following seq as a
// zigzag-varint delta from the one before. The empty list is no bytes.
func appendSourceSeqs(dst []byte, seqs []int64) []byte {
	for i, s := range seqs {
		if i == 0 {
			dst = binary.AppendUvarint(dst, uint64(s))
			continue
		}
		dst = binary.AppendVarint(dst, s-seqs[i-1])
	}
	return dst
}

// decodeSourceSeqs decodes the schema-17 form of a sourceEventSeqs list.
// Every seq must be a safe non-negative integer; rules about the event's
// own seq and repeats are checked by seam.ValidateEvent. The list holds at
// most one seq per byte, so memory is bounded by the BLOB.
func decodeSourceSeqs(b []byte) ([]int64, error) {
	out := make([]int64, 0, min(len(b), 64))
	for len(b) > 0 {
		var s int64
		if len(out) == 0 {
			u, n := binary.Uvarint(b)
			if n <= 0 {
				return nil, errors.New("bad varint")
			}
			if u > maxSafeInteger {
				return nil, fmt.Errorf("seq %d out of range", u)
			}
			s, b = int64(u), b[n:]
		} else {
			d, n := binary.Varint(b)
			if n <= 0 {
				return nil, errors.New("bad varint")
			}
			if d > maxSafeInteger || d < -maxSafeInteger {
				return nil, fmt.Errorf("delta %d out of range", d)
			}
			s, b = out[len(out)-1]+d, b[n:]
			if s < 0 || s > maxSafeInteger {
				return nil, fmt.Errorf("seq %d out of range", s)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
	zstdErr  error
)

func zstdCodecs() (*zstd.Encoder, *zstd.Decoder, error) {
	zstdOnce.Do(func() {
		// SpeedDefault is zstd's level 3; frames carry a checksum.
		zstdEnc, zstdErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true))
		if zstdErr != nil {
			return
		}
		zstdDec, zstdErr = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxPayload),
			zstd.WithDecoderMaxWindow(maxPayload), zstd.WithDecoderConcurrency(2))
	})
	return zstdEnc, zstdDec, zstdErr
}

func compress(text []byte) []byte {
	enc, _, err := zstdCodecs()
	if err != nil {
		return nil // store as text
	}
	return enc.EncodeAll(text, make([]byte, 0, len(text)/2))
}

// decompress appends to dst the zstd payload blob, of at most maxPayload
// bytes.
func decompress(dst, blob []byte) ([]byte, error) {
	_, dec, err := zstdCodecs()
	if err != nil {
		return nil, err
	}
	var h zstd.Header
	if err := h.Decode(blob); err != nil {
		return nil, fmt.Errorf("not a zstd frame: %v", err)
	}
	if h.Skippable {
		return nil, errors.New("skippable zstd frame")
	}
	if h.HasFCS && h.FrameContentSize > maxPayload {
		return nil, fmt.Errorf("zstd frame declares %d bytes, more than %d", h.FrameContentSize, maxPayload)
	}
	out, err := dec.DecodeAll(blob, dst)
	if err != nil {
		return nil, fmt.Errorf("zstd: %v", err)
	}
	return out, nil
}

func corruptf(format string, args ...any) *seam.Error {
	return &seam.Error{Kind: seam.ErrCorrupt, Pos: seam.NoPos, Err: fmt.Errorf(format, args...)}
}

// causeOf returns the cause of a *seam.Error, or err itself.
func causeOf(err error) error {
	var e *seam.Error
	if errors.As(err, &e) && e.Err != nil {
		return e.Err
	}
	return err
}

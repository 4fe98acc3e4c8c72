package seam

import "github.com/dshctl/dshctl/internal/rawjson"

// DecodeStoredEvent builds and validates the event of a record stored field
// by field, as a database row holds it, rather than as one JSON line: data
// and surfaceOp are JSON texts (surfaceOp nil when absent) and sourceSeqs
// is the expanded list (nil when absent). Each text must be exactly one JSON
// value, so no field can spill into another. It checks what DecodeRecord
// checks of a line; vocabulary and contiguity stay the caller's. Data and
// surfaceOp are copied in compact form. Errors are ErrCorrupt without a
// position.
func DecodeStoredEvent(typ string, seq, time int64, data, surfaceOp []byte, ignorable bool, sourceSeqs []int64, v int) (Event, error) {
	return decodeStoredEvent(typ, seq, time, data, surfaceOp, ignorable, sourceSeqs, v, false)
}

// DecodeStoredEventAlias is DecodeStoredEvent for a reader done with the
// row before its buffers change (ScanOptions.Transient): the event's Data
// and SurfaceOp alias data and surfaceOp when they are compact, as dsh
// writes them, instead of being copies.
func DecodeStoredEventAlias(typ string, seq, time int64, data, surfaceOp []byte, ignorable bool, sourceSeqs []int64, v int) (Event, error) {
	return decodeStoredEvent(typ, seq, time, data, surfaceOp, ignorable, sourceSeqs, v, true)
}

func decodeStoredEvent(typ string, seq, time int64, data, surfaceOp []byte, ignorable bool, sourceSeqs []int64, v int, alias bool) (Event, error) {
	e := Event{Type: typ, Seq: seq, Time: time, Ignorable: ignorable, SourceEventSeqs: sourceSeqs}
	if seq < 0 {
		return e, corruptf("event: negative seq %d", seq)
	}
	valid, compact := rawjson.Scan(data)
	if !valid || !rawjson.IsObject(data) {
		return e, corruptf("event seq %d: data must be a JSON object", seq)
	}
	e.Data = keepValid(data, compact, alias)
	if surfaceOp != nil {
		valid, compact := rawjson.Scan(surfaceOp)
		if !valid {
			return e, brokef(ErrSurfaceOp, "event seq %d: surfaceOp is not valid JSON", seq)
		}
		e.SurfaceOp = keepValid(surfaceOp, compact, alias)
	}
	if err := ValidateEvent(&e, v); err != nil {
		return e, err
	}
	return e, nil
}

// DecodeSourceSeqs decodes a stored sourceEventSeqs JSON array of a
// version-v log: from v2 on a [start,end] pair stands for the run
// start..end. Errors are ErrCorrupt without a position.
func DecodeSourceSeqs(raw []byte, v int) ([]int64, error) {
	if valid, _ := rawjson.Scan(raw); !valid {
		return nil, brokef(ErrSourceEventSeqs, "sourceEventSeqs is not valid JSON")
	}
	seqs, err := decodeSourceSeqs(raw, v)
	if err != nil {
		return nil, brokef(ErrSourceEventSeqs, "sourceEventSeqs: %v", err)
	}
	return seqs, nil
}

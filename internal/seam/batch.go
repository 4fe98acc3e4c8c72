package seam

import (
	"errors"
	"fmt"
	"slices"
)

// PrepareBatch validates a batch for Append to session id, whose log has
// format version v and next seq next, and returns it in canonical form
// (compact JSON payloads). It rejects, before anything is written: a seq that
// does not continue the log (ErrSeqMismatch), a payload that is not a JSON
// object (NaN and Inf cannot be represented), a broken envelope, and a type
// that dsh would refuse to read (ErrInvalid).
func PrepareBatch(id string, v int, next int64, events []Event) ([]Event, error) {
	out := make([]Event, len(events))
	for i := range events {
		e := events[i]
		if e.Seq != next+int64(i) {
			return nil, seqMismatch(id, next+int64(i), i, e.Seq)
		}
		valid, compact := scanJSON(e.Data)
		if !valid || !isObject(e.Data) {
			return nil, batchErr(id, i, e.Seq, fmt.Errorf("data of %s is not a JSON object", e.Type))
		}
		e.Data = compactValid(e.Data, compact)
		if e.SurfaceOp != nil {
			valid, compact := scanJSON(e.SurfaceOp)
			if !valid {
				return nil, batchErr(id, i, e.Seq, fmt.Errorf("surfaceOp is not valid JSON"))
			}
			e.SurfaceOp = compactValid(e.SurfaceOp, compact)
		}
		// Clone keeps an empty list empty, not absent.
		e.SourceEventSeqs = slices.Clone(e.SourceEventSeqs)
		if err := ValidateEvent(&e, v); err != nil {
			return nil, batchErr(id, i, e.Seq, err)
		}
		if err := CheckVocabulary(&e, v); err != nil {
			return nil, batchErr(id, i, e.Seq, err)
		}
		out[i] = e
	}
	return out, nil
}

func batchErr(id string, index int, seq int64, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Err != nil {
		err = e.Err
	}
	return &Error{Kind: ErrInvalid, Op: "append", ID: id, Pos: Pos{Offset: -1, Frame: -1, Line: -1, Seq: seq},
		Err: fmt.Errorf("event %d: %w", index, err)}
}

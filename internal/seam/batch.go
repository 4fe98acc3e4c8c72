package seam

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// PrepareBatch validates a batch for Append to session id, whose log has
// format version v and next seq next, and returns it in canonical form
// (compact JSON payloads). It rejects, before anything is written: a seq that
// does not continue the log (ErrSeqMismatch), a payload that is not a JSON
// object (NaN and Inf cannot be represented), a broken envelope, and a type
// that dsh would refuse to read (ErrInvalid).
func PrepareBatch(id string, v int, next int64, events []Event) ([]Event, error) {
	return prepareBatch(id, v, next, events, false)
}

// PrepareBatchAlias is PrepareBatch for a writer done with the batch
// before its events change (a streamed append): a compact payload is
// returned as it is instead of being copied, so that a large event is not
// held twice.
func PrepareBatchAlias(id string, v int, next int64, events []Event) ([]Event, error) {
	return prepareBatch(id, v, next, events, true)
}

func prepareBatch(id string, v int, next int64, events []Event, alias bool) ([]Event, error) {
	out := make([]Event, len(events))
	for i := range events {
		if seq := events[i].Seq; seq != next+int64(i) {
			return nil, seqMismatch(id, next+int64(i), i, seq)
		}
		e, err := prepareEvent(events[i], v, alias)
		if err != nil {
			return nil, batchErr(id, i, events[i].Seq, err)
		}
		out[i] = e
	}
	return out, nil
}

// PrepareEvent is PrepareBatch for one event of a version-v log, without the
// seq check: it returns e in canonical form, or why it cannot be appended (a
// payload that is not a JSON object, a broken envelope, a type dsh would
// refuse). The error is the bare reason, for callers that say where the
// event came from (a line of an input file).
func PrepareEvent(e Event, v int) (Event, error) { return prepareEvent(e, v, false) }

// PrepareEventAlias is PrepareEvent without a copy of a compact payload
// (see PrepareBatchAlias).
func PrepareEventAlias(e Event, v int) (Event, error) { return prepareEvent(e, v, true) }

func prepareEvent(e Event, v int, alias bool) (Event, error) {
	valid, compact := rawjson.Scan(e.Data)
	if !valid || !rawjson.IsObject(e.Data) {
		return e, fmt.Errorf("data of %s is not a JSON object", e.Type)
	}
	e.Data = prepared(e.Data, compact, alias)
	if e.SurfaceOp != nil {
		valid, compact := rawjson.Scan(e.SurfaceOp)
		if !valid {
			return e, fmt.Errorf("surfaceOp is not valid JSON")
		}
		e.SurfaceOp = prepared(e.SurfaceOp, compact, alias)
	}
	// Clone keeps an empty list empty, not absent.
	e.SourceEventSeqs = slices.Clone(e.SourceEventSeqs)
	if err := ValidateEvent(&e, v); err != nil {
		return e, err
	}
	if err := CheckVocabulary(&e, v); err != nil {
		return e, err
	}
	return e, nil
}

// prepared is the valid JSON value raw in compact form: raw itself when
// alias allows and it is compact, else a compact copy.
func prepared(raw []byte, compact, alias bool) []byte {
	if alias && compact {
		return raw[:len(raw):len(raw)]
	}
	return compactValid(raw, compact)
}

func batchErr(id string, index int, seq int64, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Err != nil {
		err = e.Err
	}
	return &Error{Kind: ErrInvalid, Op: "append", ID: id, Pos: Pos{Offset: -1, Frame: -1, Line: -1, Seq: seq},
		Err: fmt.Errorf("event %d: %w", index, err)}
}

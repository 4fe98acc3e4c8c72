package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dshctl/dshctl/internal/rawjson"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
)

// AppendOptions say what Append writes.
type AppendOptions struct {
	// Create, when set, creates the session when it does not exist, from
	// this header (see Create); the id is Append's.
	Create *seam.Header
	// CloseInterrupted appends, after the input's events, the closers of
	// the turn the log and those events leave open, as dsh's resume does
	// (inspect.ClosersAfter): the log then ends in a closed turn.
	CloseInterrupted bool
	// Input holds events, one JSON object per line; nil for none. Name
	// names it in errors.
	Input io.Reader
	Name  string
	// AssignSeq numbers the input's events from the stored next seq, and
	// Now (epoch ms) is the time of those without one.
	AssignSeq bool
	Now       int64
	// ExpectNextSeq, when set, makes Append fail with a *NextSeqError,
	// writing nothing, unless the log's next seq (under the write lock) is
	// *ExpectNextSeq: a compare-and-append, so that a script retrying a
	// batch never writes it twice.
	ExpectNextSeq *int64
}

// NextSeqError is an append whose ExpectNextSeq is not the log's next seq:
// nothing was written. Stored is the log's next seq.
type NextSeqError struct {
	ID               string
	Stored, Expected int64
}

func (e *NextSeqError) Error() string {
	return fmt.Sprintf("session %q: the log's next seq is %d, not the %d expected: nothing was written", e.ID, e.Stored, e.Expected)
}

// AppendResult is what Append did, in the shape `append -o json` prints.
type AppendResult struct {
	ID       string `json:"id"`
	Created  bool   `json:"created"`
	Closers  int    `json:"closers"`
	Appended int    `json:"appended"`
	FirstSeq int64  `json:"firstSeq"`
	NextSeq  int64  `json:"nextSeq"`
	// Repairs lists the torn or uncommitted tails removed (and saved to a
	// backup) before the batch was written; empty when the log was clean.
	Repairs []seam.Repair `json:"repairs"`
}

// InputError is an input line that is not an event to append; Line is 0
// when reading the input failed.
type InputError struct {
	Name string
	Line int
	Err  error
}

func (e *InputError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("read %s: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("%s line %d: invalid event: %v", e.Name, e.Line, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// ErrNoSeq is an input event without a seq (and AssignSeq is off).
var ErrNoSeq = errors.New("the event has no seq")

// SeqError is an input event whose seq does not continue the log.
type SeqError struct{ Got, Want int64 }

func (e *SeqError) Error() string { return fmt.Sprintf("seq %d, expected %d", e.Got, e.Want) }

// OpenEvents opens the file of events to append that name names, refusing
// a folder.
func OpenEvents(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("read events: %s is a directory, not a file of events", name)
	}
	return f, nil
}

// OpenTarget opens the session to append to that arg names (see
// OpenSession), or, with create, the store r asks for (o.Create makes a
// missing one) with arg as the exact id of the session Append creates when
// it does not exist.
func OpenTarget(ctx context.Context, r Request, arg string, create bool, o Options) (*Session, error) {
	if !create {
		return OpenSession(ctx, r, arg, o)
	}
	svc, err := r.Open(o)
	if err != nil {
		return nil, err
	}
	return &Session{svc, arg}, nil
}

// Append appends one durable batch to session id of svc through a write
// handle: the input's events, then, when asked, the closers of the turn
// they leave open. Every input line is validated before anything is
// written (an invalid one is an *InputError and nothing is written). The
// write path removes a torn or uncommitted tail first, saving its bytes;
// those repairs are in the result even when the append then fails, since
// they happened. The result is nil only when the session could not be
// opened or created.
func Append(ctx context.Context, svc seam.Service, id string, o AppendOptions) (*AppendResult, error) {
	res := &AppendResult{ID: id, Repairs: []seam.Repair{}}
	h, err := svc.Open(ctx, id, seam.Write)
	if o.Create != nil && errors.Is(err, seam.ErrNotFound) {
		hdr := *o.Create
		hdr.ID = id
		h, err = Create(ctx, svc, hdr)
		res.Created = err == nil
	}
	if err != nil {
		return nil, err
	}
	defer h.Close()
	snap, err := h.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	next, version := snap.EventCount, snap.Header.Version
	if o.ExpectNextSeq != nil && *o.ExpectNextSeq != next {
		return res, &NextSeqError{ID: id, Stored: next, Expected: *o.ExpectNextSeq}
	}

	var batch []seam.Event
	if o.Input != nil {
		if batch, err = readEvents(o.Input, o.Name, version, next, o.AssignSeq, o.Now); err != nil {
			return res, err
		}
	}
	if o.CloseInterrupted {
		closers, err := inspect.ClosersAfter(ctx, h, batch)
		if err != nil {
			return res, err
		}
		batch = append(batch, closers...)
		res.Closers = len(closers)
	}
	res.FirstSeq, res.NextSeq = next, next+int64(len(batch))
	res.Appended = len(batch)
	if len(batch) > 0 {
		err := h.Append(ctx, batch)
		if tr, ok := h.(seam.TailRepairer); ok {
			res.Repairs = append(res.Repairs, tr.Repairs()...)
		}
		if err != nil {
			return res, err
		}
	} else if res.Created {
		if err := h.Flush(ctx); err != nil {
			return res, err
		}
	}
	return res, h.Close()
}

// readEvents reads the events of a version-v log, one per line, the first
// of which must have seq next; blank lines are skipped.
func readEvents(r io.Reader, name string, v int, next int64, assignSeq bool, now int64) ([]seam.Event, error) {
	var out []seam.Event
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !isBlank(line) {
			ev, verr := parseEvent(line, v, next+int64(len(out)), assignSeq, now)
			if verr != nil {
				return nil, &InputError{Name: name, Line: lineNo, Err: verr}
			}
			out = append(out, ev)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, &InputError{Name: name, Err: err}
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// parseEvent validates one input line as the event of seq want of a
// version-v log (seam.PrepareEvent) and returns it in canonical form.
func parseEvent(line []byte, v int, want int64, assignSeq bool, now int64) (seam.Event, error) {
	if assignSeq {
		var err error
		if line, err = seam.AssignSeq(line, want, now); err != nil {
			return seam.Event{}, causeOf(err)
		}
	}
	rec, err := seam.DecodeRecord(line, v)
	if err != nil {
		if !assignSeq && json.Valid(line) && !hasMember(line, "seq") && !hasMember(line, "seq0") {
			return seam.Event{}, ErrNoSeq
		}
		return seam.Event{}, causeOf(err)
	}
	if rec.Packed != nil {
		return seam.Event{}, fmt.Errorf("packed %s rows are a storage form: append one event per line", rec.Packed.Kind)
	}
	if rec.Event.Seq != want {
		return seam.Event{}, &SeqError{Got: rec.Event.Seq, Want: want}
	}
	ev, err := seam.PrepareEvent(rec.Event, v)
	if err != nil {
		return seam.Event{}, causeOf(err)
	}
	return ev, nil
}

// causeOf strips the seam error's decoration, keeping the reason: the
// input is not a stored log, so "corrupt session log" would mislead.
func causeOf(err error) error {
	var se *seam.Error
	if errors.As(err, &se) && se.Err != nil {
		return se.Err
	}
	return err
}

func hasMember(obj []byte, key string) bool {
	_, ok := rawjson.Member(obj, key)
	return ok
}

// Package ingest appends events to a session, the use case of `dshctl
// append`: it reads and validates a batch of events (JSONL) before it
// takes the session's write lock, holding at most one line of the reader's
// record limit in memory (a larger batch waits in a temp file), then
// writes it through a write handle as one append, after checking it once
// more, under the lock, against the log it continues: the seq, and every
// rule of verify, so that what append writes, verify accepts.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dshctl/dshctl/internal/rawjson"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/verify"
)

// DefaultMaxRecordBytes is the longest input line when Options leave it
// 0: the JSONL readers' default record limit.
const DefaultMaxRecordBytes = 32 << 20

// DefaultMaxFrameBytes is the frame limit when Options leave it 0: the
// JSONL readers' default.
const DefaultMaxFrameBytes = 256 << 20

// Options say what Append writes.
type Options struct {
	// Create, when set, creates the session when it does not exist, from
	// this header (see Create); the id is Append's.
	Create *seam.Header
	// CloseInterrupted appends, after the input's events, the closers of
	// the turn the log and those events leave open, as dsh's resume does
	// (verify.BatchCheck.Closers): the log then ends in a closed turn.
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
	// MaxRecordBytes is the longest input line (the readers' record
	// limit: a longer record could not be read back); 0 means
	// DefaultMaxRecordBytes.
	MaxRecordBytes int64
	// MaxFrameBytes is the most text of one zstd frame (the readers'
	// frame limit): a batch that may not fit in one is written as several
	// frames; 0 means DefaultMaxFrameBytes.
	MaxFrameBytes int64
	// SpoolDir is where a batch too large for memory waits for the lock;
	// "" means os.TempDir().
	SpoolDir string
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

// Result is what Append did, in the shape `append -o json` prints.
type Result struct {
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

// maxCreateTries bounds how often Append goes between a create that lost
// a race (the session appeared) and an open that found no session (the
// racing creator failed).
const maxCreateTries = 3

// Append appends one durable batch to session id of svc: the input's
// events, then, when asked, the closers of the turn they leave open.
//
// The input is read to its end and every line validated first, before
// the session's write lock is taken, so that a slow or endless input never
// holds the lock, and an invalid line (an *InputError) writes nothing. A
// line longer than the record limit is refused as soon as it is, and one
// that is not a JSON object at its first byte. Under the lock the batch is
// checked again against the log it continues (seq, verify's rules) before
// anything is written.
//
// With Create, a missing session is created; when another process creates
// it first, Append appends to it instead (or fails with ErrAlreadyOwned
// while that process holds its lock), so that of racing creators exactly
// one creates. The write path removes a torn or uncommitted tail first,
// saving its bytes; those repairs are in the result even when the append
// then fails, since they happened. The result is nil when the session
// could not be opened or created, or the input was refused.
func Append(ctx context.Context, svc seam.Service, id string, o Options) (*Result, error) {
	v, next, err := target(ctx, svc, id, o.Create)
	if err != nil {
		return nil, err
	}
	sp := &spool{dir: o.SpoolDir, first: -1}
	defer sp.Close()
	if o.Input != nil {
		if err := read(ctx, sp, o, v, next); err != nil {
			return nil, err
		}
	}
	res, err := appendTo(ctx, svc, id, sp, &o)
	var lost *lostCreate
	if !errors.As(err, &lost) {
		return res, err
	}
	// Another process took the new session's lock first: append to the
	// session it made, unless it is still making it.
	o.Create = nil
	res, err = appendTo(ctx, svc, id, sp, &o)
	if errors.Is(err, seam.ErrNotFound) {
		return nil, &seam.Error{Kind: seam.ErrAlreadyOwned, Op: "create", ID: id, Pos: seam.NoPos,
			Err: errors.New("another process is creating the session")}
	}
	return res, err
}

// lostCreate is a create that another process's create beat.
type lostCreate struct{ err error }

func (e *lostCreate) Error() string { return e.err.Error() }
func (e *lostCreate) Unwrap() error { return e.err }

// appendTo appends the batch sp holds to session id under its write
// lock, creating it with o.Create when it is missing.
func appendTo(ctx context.Context, svc seam.Service, id string, sp *spool, o *Options) (*Result, error) {
	h, created, err := open(ctx, svc, id, o.Create)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	res := &Result{ID: id, Created: created, Repairs: []seam.Repair{}}
	snap, err := h.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	next := snap.EventCount
	if o.ExpectNextSeq != nil && *o.ExpectNextSeq != next {
		return res, &NextSeqError{ID: id, Stored: next, Expected: *o.ExpectNextSeq}
	}
	w := &writeBatch{sp: sp, o: o, p: parser{v: snap.Header.Version, next: next, assignSeq: o.AssignSeq, now: o.Now},
		tail: snap.Location.TornBytes > 0 || snap.Location.UncommittedBytes > 0}
	if err := w.check(ctx, h); err != nil {
		return res, err
	}
	res.Appended, res.Closers = int(sp.lines)+len(w.closers), len(w.closers)
	res.FirstSeq, res.NextSeq = next, next+int64(res.Appended)
	switch {
	case res.Appended > 0:
		err = w.write(ctx, h)
		if tr, ok := h.(seam.TailRepairer); ok {
			res.Repairs = append(res.Repairs, tr.Repairs()...)
		}
	case created:
		err = h.Flush(ctx)
	}
	if created && errors.Is(err, seam.ErrAlreadyExists) {
		return nil, &lostCreate{err}
	}
	if err != nil {
		return res, err
	}
	return res, h.Close()
}

// target returns the format version of session id (or of the one Create
// makes) and its next seq as it stands now, before the lock: what the
// input is first validated for; -1 when Stat cannot tell.
func target(ctx context.Context, svc seam.Service, id string, create *seam.Header) (int, int64, error) {
	snap, err := svc.Stat(ctx, id)
	if err == nil {
		return snap.Header.Version, snap.EventCount, nil
	}
	if !errors.Is(err, seam.ErrNotFound) {
		// A log Stat cannot read may still take an append (the write
		// open reads further); the write open says what is wrong.
		return -1, 0, nil
	}
	if create == nil {
		return 0, 0, err
	}
	v := create.Version
	if v == Latest {
		if v, err = latest(ctx, svc, id); err != nil {
			return 0, 0, err
		}
	}
	return v, 0, nil
}

// open opens session id for writing, or creates it from create when it is
// missing; created says which.
func open(ctx context.Context, svc seam.Service, id string, create *seam.Header) (seam.Handle, bool, error) {
	for try := 1; ; try++ {
		h, err := svc.Open(ctx, id, seam.Write)
		if create == nil || !errors.Is(err, seam.ErrNotFound) {
			return h, false, err
		}
		hdr := *create
		hdr.ID = id
		h, err = Create(ctx, svc, hdr)
		if !errors.Is(err, seam.ErrAlreadyExists) || try == maxCreateTries {
			return h, err == nil, err
		}
		// Another process created it first: append to it.
	}
}

// read reads the input into sp, validating every line for a log of
// version v whose next seq is next.
func read(ctx context.Context, sp *spool, o Options, v int, next int64) error {
	limit := o.MaxRecordBytes
	if limit <= 0 {
		limit = DefaultMaxRecordBytes
	}
	lr := newLineReader(newCtxReader(ctx, o.Input), limit)
	p := parser{v: v, next: next, assignSeq: o.AssignSeq, now: o.Now}
	for {
		line, no, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if no == 0 {
				return &InputError{Name: o.Name, Err: err}
			}
			return &InputError{Name: o.Name, Line: no, Err: err}
		}
		if sp.lines == 0 && !o.AssignSeq {
			// The batch's own first seq: the log's next one is known
			// under the lock only.
			if s, ok := rawjson.LookupInt(line, "seq"); ok {
				p.next = s
			}
		}
		// Spooled first: parse may number the line in place.
		if err := sp.add(no, line); err != nil {
			return &InputError{Name: o.Name, Err: err}
		}
		if _, err := p.parse(line); err != nil {
			return &InputError{Name: o.Name, Line: no, Err: err}
		}
	}
	sp.buf = lr.line[:0]
	return sp.finish()
}

// writeBatch is a validated batch on its way into the log.
type writeBatch struct {
	sp      *spool
	o       *Options
	p       parser // numbers the events from the log's next seq
	closers []seam.Event
	tail    bool // the log ends in a torn or uncommitted tail
}

// check validates the batch once more, under the lock, as it will stand
// in the log: seqs from the log's next one, verify's rules after the
// log's open turn. It finds the closers too.
func (w *writeBatch) check(ctx context.Context, h seam.Handle) error {
	if w.sp.lines == 0 && !w.o.CloseInterrupted {
		return nil
	}
	// The open turn is read within a budget, unless its closers are
	// asked for: a hostile tail costs an append no more than that.
	var budget int64 = checkBudget
	switch {
	case w.o.CloseInterrupted:
		budget = 0
	case w.tail:
		// The log ends in a tail the append removes: the turn rules wait
		// for the batch's first turn/start rather than read past it.
		budget = -1
	}
	bc, err := verify.NewBatchCheck(ctx, h, budget)
	if err != nil {
		return err
	}
	p := w.p
	err = w.sp.each(ctx, false, func(no int, line []byte) error {
		e, err := p.parse(line)
		if err == nil {
			err = bc.Add(&e)
		}
		if err != nil {
			return &InputError{Name: w.o.Name, Line: no, Err: err}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if w.o.CloseInterrupted {
		w.closers = bc.Closers()
	}
	return nil
}

// checkBudget bounds the reading of the log's open turn for the check of
// a batch (seam.ScanOptions.MaxBytes).
const checkBudget = 4 << 20

// chunkBytes is about how much of a streamed batch is held at a time.
const chunkBytes = 1 << 20

// write appends the batch and its closers through h: in one piece when it
// is small, else streamed (seam.StreamAppender).
func (w *writeBatch) write(ctx context.Context, h seam.Handle) error {
	sa, stream := h.(seam.StreamAppender)
	frame := w.o.MaxFrameBytes
	if frame <= 0 {
		frame = DefaultMaxFrameBytes
	}
	// Numbering can make a line of a few bytes a few dozen longer: a batch
	// of more than a quarter of the frame limit may not fit in one frame.
	if !stream || !w.sp.large() && w.sp.size*4 <= frame {
		var batch []seam.Event
		p := w.p
		err := w.sp.each(ctx, true, func(_ int, line []byte) error {
			e, err := p.parse(line)
			batch = append(batch, e)
			return err
		})
		if err != nil {
			return err
		}
		return h.Append(ctx, append(batch, w.closers...))
	}
	// The spool is read by a goroutine that hands over one chunk at a
	// time: next blocks until the chunk is ready. A long line is read
	// into the spool's buffer and handed over alone, its event aliasing
	// the buffer: the goroutine waits until the writer asks for the next
	// chunk before it reads on, so that the line is held once. Shorter
	// lines are copied, a chunk of them at a time.
	type handover struct {
		events  []seam.Event
		aliased bool
	}
	chunks := make(chan handover)
	done := make(chan struct{})
	errc := make(chan error, 1)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		p := w.p
		var chunk []seam.Event
		var size int
		send := func(aliased bool) error {
			select {
			case chunks <- handover{chunk, aliased}:
				chunk, size = nil, 0
			case <-rctx.Done():
				return rctx.Err()
			}
			if !aliased {
				return nil
			}
			select {
			case <-done:
				return nil
			case <-rctx.Done():
				return rctx.Err()
			}
		}
		err := w.sp.each(rctx, false, func(_ int, line []byte) error {
			long := len(line) >= chunkBytes
			if long && len(chunk) > 0 {
				if err := send(false); err != nil {
					return err
				}
			}
			if !long {
				line = append(make([]byte, 0, len(line)+numberRoom), line...)
			}
			e, err := p.parse(line)
			if err != nil {
				return err
			}
			chunk = append(chunk, e)
			if size += len(line); long || size >= chunkBytes {
				return send(long)
			}
			return nil
		})
		if err == nil {
			chunk = append(chunk, w.closers...)
			if len(chunk) > 0 {
				err = send(false)
			}
		}
		errc <- err
		close(chunks)
	}()
	var readErr error
	aliased := false
	next := func() ([]seam.Event, error) {
		if aliased {
			// The writer is done with the chunk that aliases the
			// spool's buffer.
			aliased = false
			select {
			case done <- struct{}{}:
			case <-rctx.Done():
			}
		}
		c, ok := <-chunks
		if ok {
			aliased = c.aliased
			return c.events, nil
		}
		if readErr == nil {
			readErr = <-errc
		}
		return nil, readErr
	}
	err := sa.AppendStream(ctx, next)
	cancel()
	for range chunks {
	}
	return err
}

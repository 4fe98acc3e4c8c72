package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"iter"
	"math"
	"sync"

	"github.com/dshctl/dshctl/internal/seam"
)

// handle is an open session of a Store.
type handle struct {
	s         *Store
	id        string
	access    seam.Access
	hdr       seam.Header
	inherited int64

	mu     sync.Mutex
	closed bool
	w      *writer // write state; nil for read handles

	// pin, when set, is the connection and read transaction of a listing
	// that the handle's reads use while the store has committed no write
	// since pinWrites (see ListOpen).
	pin       *pinned
	pinWrites int64
}

// reader returns where h's reads run: nil for the store's pool.
func (h *handle) reader() querier {
	if h.pin != nil && writes.Load() == h.pinWrites {
		return h.pin
	}
	return nil
}

var _ seam.Handle = (*handle)(nil)

func (h *handle) ID() string                 { return h.id }
func (h *handle) Header() seam.Header        { return h.hdr }
func (h *handle) InheritedEventCount() int64 { return h.inherited }
func (h *handle) Access() seam.Access        { return h.access }

// Open opens a stored session. A read open reads the sessions row and
// checks the vocabulary of the last row; the body is validated as it is
// read. A write open takes the session's write lock and validates the
// whole session first, as the JSONL backend does before it appends.
func (s *Store) Open(ctx context.Context, id string, access seam.Access) (seam.Handle, error) {
	if err := s.check(ctx, "open"); err != nil {
		return nil, err
	}
	if access == seam.Write {
		return s.openWrite(ctx, id)
	}
	if p, ok := s.writers.Pending(id); ok {
		s.ref()
		return &handle{s: s, id: id, access: seam.Read, hdr: p.hdr, inherited: p.inherited}, nil
	}
	r, found, err := s.loadSession(ctx, nil, id)
	if err != nil {
		return nil, s.sqlErr("open", id, err)
	}
	if !found {
		return nil, seam.NotFound("open", id)
	}
	h, err := r.header()
	if err != nil {
		return nil, s.rowErr("open", id, -1, err)
	}
	return s.readHandle(ctx, &r, h, nil)
}

// readHandle makes a read handle of the session whose row r and header h
// were read. last holds the events of its last committed row when the
// caller read them already.
func (s *Store) readHandle(ctx context.Context, r *sessionRow, h seam.Header, last []seam.Event) (*handle, error) {
	if !s.opts.AllowUnknownTypes {
		if last == nil {
			t, err := s.readTail(ctx, nil, r.id, h.Version)
			if err != nil {
				return nil, s.sqlErr("open", r.id, err)
			}
			last = t.events()
		}
		for _, e := range last {
			if err := seam.CheckVocabulary(&e, h.Version); err != nil {
				return nil, s.rowErr("open", r.id, e.Seq, err)
			}
		}
	}
	s.ref()
	return &handle{s: s, id: r.id, access: seam.Read, hdr: h, inherited: inheritedOf(r, &h)}, nil
}

// inheritedOf is the inherited event count the sessions row records: the
// header's seedLength (v0/v1) or, from v2 on, seed_length of a seeded
// session. A complete forward scan checks it against the seed marker.
func inheritedOf(r *sessionRow, h *seam.Header) int64 {
	if r.seedLength.Valid && h.Seeded() {
		return r.seedLength.Int64
	}
	return 0
}

// Snapshot returns the session's metadata as h reads it now: the pending
// create's empty session, or the sessions row and last row as stored
// (which a write handle's appends left, since they commit).
func (h *handle) Snapshot(ctx context.Context) (seam.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return seam.Snapshot{}, err
	}
	if err := h.use("stat"); err != nil {
		return seam.Snapshot{}, err
	}
	if h.unborn() {
		if h.w != nil {
			return h.pendingSnapshot(), nil
		}
		if p, ok := h.s.writers.Pending(h.id); ok {
			return p.pendingSnapshot(), nil
		}
	}
	if q := h.reader(); q != nil {
		return h.s.statIn(ctx, q, h.id)
	}
	tx, err := h.s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return seam.Snapshot{}, h.s.sqlErr("stat", h.id, err)
	}
	defer tx.Rollback()
	return h.s.statIn(ctx, tx, h.id)
}

// use checks that h is open.
func (h *handle) use(op string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return &seam.Error{Kind: seam.ErrHandleClosed, Op: op, ID: h.id, Pos: seam.NoPos}
	}
	return nil
}

// unborn reports whether h is a handle of a create this store has not
// stored yet: nothing to read.
func (h *handle) unborn() bool {
	if h.w != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.w.pending
	}
	_, ok := h.s.writers.Pending(h.id)
	return ok
}

// Read returns the committed events from seq offset on, at most length of
// them (all when length < 0).
func (h *handle) Read(ctx context.Context, offset, length int64) ([]seam.Event, error) {
	if offset < 0 {
		return nil, seam.Errorf(seam.ErrInvalid, "read", h.id, seam.NoPos, "negative offset %d", offset)
	}
	out := []seam.Event{}
	if length == 0 {
		return out, h.use("read")
	}
	for e, err := range h.Scan(ctx, seam.ScanOptions{From: offset}) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if length > 0 && int64(len(out)) == length {
			break
		}
	}
	return out, nil
}

// Scan streams committed events in one statement, so it sees one state of
// the session. A forward scan that reads the whole session also checks the
// v2+ seed-marker rule; a torn final row is never served.
func (h *handle) Scan(ctx context.Context, opts seam.ScanOptions) iter.Seq2[seam.Event, error] {
	return func(yield func(seam.Event, error) bool) {
		fail := func(err error) { yield(seam.Event{}, h.s.sqlErr("read", h.id, err)) }
		if err := h.use("read"); err != nil {
			fail(err)
			return
		}
		if opts.From < 0 {
			fail(seam.Errorf(seam.ErrInvalid, "read", h.id, seam.NoPos, "negative seq %d", opts.From))
			return
		}
		if h.unborn() {
			return
		}
		emit := func(e *seam.Event) bool { return yield(*e, nil) }
		var err error
		if opts.Reverse {
			err = h.s.reverse(ctx, h.reader(), h, opts.From, opts.MaxBytes, opts.Transient, emit)
		} else {
			var end scanEnd
			end, err = h.s.forward(ctx, h.reader(), h, opts.From, opts.MaxBytes, h.s.opts.AllowUnknownTypes, opts.Transient, emit)
			if err == nil && end.complete {
				err = h.checkMarker(&end)
			}
		}
		if err != nil && !errors.Is(err, errStop) {
			fail(err)
		}
	}
}

// checkMarker checks, after a complete forward scan, the v2+ rule of a
// seeded header and that the seed marker agrees with the recorded count.
func (h *handle) checkMarker(end *scanEnd) error {
	n, err := end.marker.Result(&h.hdr)
	if err != nil {
		return h.s.rowErr("read", h.id, -1, err)
	}
	if h.hdr.Version >= 2 && n != h.inherited {
		return h.s.rowErr("read", h.id, n, corruptf("the seed marker is at seq %d, but seed_length is %d", n, h.inherited))
	}
	return nil
}

// errStop ends a scan whose consumer stopped.
var errStop = errors.New("scan stopped")

// scanEnd is what a forward scan found.
type scanEnd struct {
	complete  bool  // it read the session from seq 0 to its end
	next      int64 // the next seq after the last committed row
	lastFirst int64 // seq of the last committed row; -1 when none
	torn      *RawRow
	tornErr   error
	marker    seam.SeedMarker
}

// forward streams the events of h's session from seq from on. A packed row
// that does not decode ends the committed log when it is the final row (a
// torn row: skipped, recorded in the end); any other row that does not
// decode is an error. With
// alias, events alias the row's buffers until emit returns.
func (s *Store) forward(ctx context.Context, q querier, h *handle, from, budget int64, lenient, alias bool, emit func(*seam.Event) bool) (scanEnd, error) {
	end := scanEnd{complete: from == 0, lastFirst: -1}
	v := h.hdr.Version
	// From seq 0, every row (one with a negative seq is damage); else
	// from the row that holds seq from, which may be a packed row that
	// starts before it.
	rest, args := `WHERE session_id = ?1 ORDER BY seq`, []any{h.id}
	if from > 0 {
		rest = `WHERE session_id = ?1
		AND seq >= coalesce((SELECT max(seq) FROM events WHERE session_id = ?1 AND seq <= ?2), 0) ORDER BY seq`
		args = append(args, from)
	}
	rows, err := s.eventRows(ctx, q, false, rest, args...)
	if err != nil {
		return end, err
	}
	if d, ok := rows.(*directRows); ok {
		rows = s.prefetch(d, budget)
	}
	defer rows.close()
	// give emits e unless it lies before from.
	give := func(e *seam.Event) error {
		if e.Seq < from {
			return nil
		}
		if !lenient {
			if err := seam.CheckVocabulary(e, v); err != nil {
				return s.rowErr("read", h.id, e.Seq, err)
			}
		}
		end.marker.Observe(e)
		if !emit(e) {
			return errStop
		}
		return nil
	}
	var one seam.Event
	var cur seam.Cursor
	started := false
	done := ctx.Done() // checked per row: rows read ahead are not served once ctx ends
	left := newRowBudget(budget)
	var bad *RawRow
	var badErr error
	for {
		select {
		case <-done:
			return end, ctx.Err()
		default:
		}
		r, err := rows.next()
		if err != nil {
			return end, s.rowErr("read", h.id, -1, err)
		}
		if r == nil {
			break
		}
		if bad != nil {
			return end, s.rowErr("read", h.id, bad.Seq, badErr)
		}
		if !left.enter(r) {
			return end, s.budgetErr(h.id)
		}
		rec, err := decodeRow(r, s.schema, v, alias)
		if err != nil {
			if !errors.Is(err, seam.ErrCorrupt) || !s.tornable(r) {
				return end, s.rowErr("read", h.id, r.Seq, err)
			}
			c := r.clone()
			bad, badErr = &c, err
			continue
		}
		if !left.decode(recordSize(&rec)) {
			return end, s.budgetErr(h.id)
		}
		if !started {
			started = true
			if from > 0 {
				cur.Next = rec.FirstSeq()
			}
		}
		if err := cur.Advance(&rec); err != nil {
			return end, s.rowErr("read", h.id, rec.FirstSeq(), err)
		}
		end.next, end.lastFirst = cur.Next, rec.FirstSeq()
		if rec.Packed == nil {
			one = rec.Event // one, not rec, escapes to emit: no allocation per row
			if err := give(&one); err != nil {
				return end, err
			}
			continue
		}
		events := rec.Packed.Expand()
		for i := range events {
			if err := give(&events[i]); err != nil {
				return end, err
			}
		}
	}
	end.torn, end.tornErr = bad, badErr
	return end, nil
}

// budgetErr is the error of a scan of session id past its budget.
func (s *Store) budgetErr(id string) error {
	return &seam.Error{Kind: seam.ErrScanBudget, Op: "read", ID: id, Pos: seam.PathPos(s.path)}
}

// reverse streams the events of h's session below seq from (all when from
// is 0), newest first. Only the session's final row may be torn.
func (s *Store) reverse(ctx context.Context, q querier, h *handle, from, budget int64, alias bool, emit func(*seam.Event) bool) error {
	v := h.hdr.Version
	upper := from
	if upper == 0 {
		upper = math.MaxInt64
	}
	rows, err := s.eventRows(ctx, q, true, `WHERE session_id = ?1 AND seq < ?2 ORDER BY seq DESC`, h.id, upper)
	if err != nil {
		return err
	}
	defer rows.close()
	expect := int64(-1) // the first seq of the row read before
	left := newRowBudget(budget)
	for {
		r, err := rows.next()
		if err != nil {
			return s.rowErr("read", h.id, -1, err)
		}
		if r == nil {
			break
		}
		if !left.enter(r) {
			return s.budgetErr(h.id)
		}
		rec, err := decodeRow(r, s.schema, v, alias)
		if err != nil {
			if expect < 0 && errors.Is(err, seam.ErrCorrupt) && rows.isFinal() && s.tornable(r) {
				continue // the torn final row
			}
			return s.rowErr("read", h.id, r.Seq, err)
		}
		if !left.decode(recordSize(&rec)) {
			return s.budgetErr(h.id)
		}
		if expect >= 0 && rec.NextSeq() != expect {
			return s.rowErr("read", h.id, rec.FirstSeq(), corruptf("row at seq %d ends at %d, but the next row starts at %d", rec.FirstSeq(), rec.NextSeq(), expect))
		}
		expect = rec.FirstSeq()
		events := rec.Events()
		for i := len(events) - 1; i >= 0; i-- {
			e := &events[i]
			if from > 0 && e.Seq >= from {
				continue
			}
			if !s.opts.AllowUnknownTypes {
				if err := seam.CheckVocabulary(e, v); err != nil {
					return s.rowErr("read", h.id, e.Seq, err)
				}
			}
			if !emit(e) {
				return errStop
			}
		}
	}
	if expect > 0 {
		return s.rowErr("read", h.id, expect, corruptf("the session starts at seq %d, not 0", expect))
	}
	return nil
}

// Close releases the handle; a write handle releases its ownership and,
// for a create never stored, the pending id.
func (h *handle) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	w := h.w
	if w != nil {
		h.s.writers.EndPending(h.id, h) // a closing create is not a session
	}
	h.mu.Unlock()
	var err error
	if h.access == seam.Write {
		if w != nil && w.owner != nil {
			err = w.owner.release()
		}
		h.s.writers.Release(h.id, h)
	}
	h.s.unref()
	if err != nil {
		return &seam.Error{Kind: seam.ErrIO, Op: "close", ID: h.id, Pos: seam.PathPos(h.s.path + lockSuffix), Err: err}
	}
	return nil
}

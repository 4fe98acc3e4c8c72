package inspect

import (
	"cmp"
	"context"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/timespec"
)

// States of a session, one word each, as list and stat name them.
const (
	StateBlank = "blank" // proven to hold no turn
	StateOpen  = "open"  // its last turn has no turn/end
	StateDone  = "done"
	StateError = "error" // dsh cannot read it (Session.Err says why)
)

// States are the State constants, in the order help lists them.
var States = []string{StateBlank, StateOpen, StateDone, StateError}

// State names the state of a readable session.
func State(blank bool, open *OpenTurn) string {
	switch {
	case blank:
		return StateBlank
	case open != nil:
		return StateOpen
	}
	return StateDone
}

// Session is what list and stat know about one session, built by one
// function (newSession) so that both describe it alike.
type Session struct {
	// Snapshot is the session's metadata. For a session whose metadata
	// cannot be read it holds at least the id and the location, and
	// HeaderKnown is false.
	Snapshot    seam.Snapshot
	HeaderKnown bool
	// MetaKnown says Meta was read: the session's log could be opened.
	MetaKnown bool
	Meta      Meta
	// State is one of the State constants; Err, for StateError, is why.
	State string
	Err   error
}

// ID returns the session's id.
func (s *Session) ID() string { return s.Snapshot.Header.ID }

// newSession builds the Session of a snapshot, the Meta read from its log
// (nil when it could not be read) and the reason dsh cannot read it, if
// any: the session is then in StateError whatever else is known about it.
func newSession(snap seam.Snapshot, headerKnown bool, meta *Meta, err error) Session {
	s := Session{Snapshot: snap, HeaderKnown: headerKnown}
	if meta != nil {
		s.Meta, s.MetaKnown = *meta, true
	}
	if err != nil {
		s.State, s.Err = StateError, err
		s.Meta.Blank = false // never hide an unreadable session
		return s
	}
	s.State = State(s.Meta.Blank, s.Meta.OpenTurn)
	return s
}

// ListOptions tune List.
type ListOptions struct {
	// MaxBytes bounds each scan of ReadMeta (see MetaOptions).
	MaxBytes int64
	// Count, for ListStream, reads every session even once Limit rows
	// are given, so that the counts are of them all.
	Count bool
	// Progress, when set, is called once, before the first row is read,
	// with the number of sessions to read (an upper bound); the function it
	// returns is called after each row, possibly from several goroutines.
	Progress func(total int) (step func())
}

// List returns a row for every session of svc, in no particular order: its
// snapshot, and the Meta that ReadMeta proves from a bounded read of its
// head and tail. A session that cannot be read is a row with State
// StateError and the reason, never dropped. The sessions are read several
// at a time (each costs a few small reads, so the work is bound by I/O
// latency), through the service's OpenLister when it has one: then each
// session is opened once, by the listing itself.
func List(ctx context.Context, svc seam.Service, o ListOptions) ([]Session, error) {
	var rows []Session
	err := listEach(ctx, svc, o, func(n int) { rows = make([]Session, 0, n) }, func(r Session) { rows = append(rows, r) })
	return rows, err
}

// listEach reads the rows of List, calling start with an upper bound of
// their number before the first and add with each, one call at a time.
func listEach(ctx context.Context, svc seam.Service, o ListOptions, start func(n int), add func(Session)) error {
	var (
		mu   sync.Mutex
		step = func() {}
	)
	begin := func(n int) {
		start(n)
		if o.Progress != nil {
			step = o.Progress(n)
		}
	}
	put := func(r Session) {
		mu.Lock()
		add(r)
		mu.Unlock()
		step()
	}
	if ol, ok := svc.(seam.OpenLister); ok {
		// The handles belong to ListOpen, which closes them.
		return ol.ListOpen(ctx, begin, func(en seam.Entry, h seam.Handle, err error) {
			put(row(ctx, en, h, err, o.MaxBytes))
		})
	}
	entries, err := svc.List(ctx)
	if err != nil {
		return err
	}
	begin(len(entries))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(entries), 2*runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(entries) {
					return
				}
				put(openRow(ctx, svc, entries[i], o.MaxBytes))
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// ListSelect is Select(List(ctx, svc, o), s) that keeps only what it
// selects while it reads: with a Limit, the Limit first rows of the order
// found so far, so that its memory does not grow with the store.
func ListSelect(ctx context.Context, svc seam.Service, o ListOptions, s Selection) (Selected, error) {
	p := newPicker(s)
	if err := listEach(ctx, svc, o, p.reserve, p.add); err != nil {
		return Selected{}, err
	}
	return p.result(), nil
}

// openRow is the row of en, read through a handle it opens and closes.
func openRow(ctx context.Context, svc seam.Service, en seam.Entry, budget int64) Session {
	if en.Err != nil {
		return row(ctx, en, nil, nil, budget)
	}
	h, err := svc.Open(ctx, en.Snapshot.Header.ID, seam.Read)
	if err != nil {
		return row(ctx, en, nil, err, budget)
	}
	defer h.Close()
	return row(ctx, en, h, nil, budget)
}

// row builds the row of en from its read handle h, or from openErr when
// it could not be opened. The caller owns h.
func row(ctx context.Context, en seam.Entry, h seam.Handle, openErr error, budget int64) Session {
	if en.Err != nil {
		return newSession(en.Snapshot, false, nil, en.Err)
	}
	if openErr != nil {
		return newSession(en.Snapshot, true, nil, openErr)
	}
	u := newUnknownTypes(en.Snapshot.Header.Version)
	meta, err := ReadMeta(ctx, u.watch(h), MetaOptions{MaxBytes: budget})
	if err != nil {
		return newSession(en.Snapshot, true, nil, err)
	}
	return newSession(en.Snapshot, true, &meta, u.err(en.Snapshot, true))
}

// SortKeys are the orders SortRows knows.
var SortKeys = []string{"created", "updated", "size", "events"}

// SortRows orders rows newest or largest first by key (one of SortKeys;
// "updated" for any other), then by id and location: a total order, so the
// result does not depend on the order List returned them in. Unknown
// values sort last.
func SortRows(rows []*Session, by string) {
	slices.SortFunc(rows, rowOrder(by))
}

// rowOrder is SortRows' order by key by.
func rowOrder(by string) func(a, b *Session) int {
	return func(a, b *Session) int {
		ka, kb := placeOf(a, by), placeOf(b, by)
		return ka.compare(&kb)
	}
}

// sortKey is the value of r that SortRows orders by (larger first).
func sortKey(r *Session, by string) int64 {
	switch by {
	case "created":
		if !r.HeaderKnown {
			return 0
		}
		return r.Snapshot.Header.CreatedAt
	case "size":
		return r.Snapshot.SizeBytes
	case "events":
		if !r.HeaderKnown {
			return -1
		}
		return r.Snapshot.EventCount
	}
	return r.UpdatedAt()
}

// UpdatedAt is when the session was last active (Meta.UpdatedAt): the
// creation time when its log could not be read, 0 when even that is
// unknown.
func (s *Session) UpdatedAt() int64 {
	switch {
	case s.MetaKnown:
		return s.Meta.UpdatedAt
	case s.HeaderKnown:
		return s.Snapshot.Header.CreatedAt
	}
	return 0
}

// Selection says which of List's rows to show, and in what order.
type Selection struct {
	// All keeps blank sessions, which are hidden otherwise.
	All bool
	// Project keeps only sessions whose cwd is this folder (cleaned), when
	// set.
	Project string
	// Sort is one of SortKeys (see SortRows); Limit keeps the first rows
	// only, when positive.
	Sort  string
	Limit int
	// States, when not empty, keeps only the sessions in these states (the
	// State constants); a blank session is then kept when StateBlank is
	// one of them, whatever All says.
	States []string
	// Active, when set, keeps only the sessions that may have been active
	// in its span (Session.ActiveIn).
	Active timespec.Range
}

// Selected is what Select keeps, and what it counted on the way.
type Selected struct {
	Rows []*Session
	// Hidden counts the blank sessions left out; Unreadable the sessions
	// in StateError, of the project when one was chosen.
	Hidden, Unreadable int
}

// Select keeps the rows s asks for, sorted and cut to its limit.
func Select(rows []Session, s Selection) Selected {
	p := newPicker(s)
	for i := range rows {
		p.keep(&rows[i])
	}
	return p.result()
}

// picker makes a Selection of rows given one at a time: it counts and
// leaves out what Select leaves out and, with a Limit, keeps only the
// Limit first rows of the order, in a heap whose root is the last of them.
type picker struct {
	s     Selection
	order func(a, b *Session) int
	out   Selected
	last  rowHeap   // with a Limit: the rows kept, last first
	block []Session // without: room for the rows kept (see reserve)
}

func newPicker(s Selection) *picker {
	p := &picker{s: s, order: rowOrder(s.Sort)}
	p.last.order = func(a, b *Session) int { return p.order(b, a) }
	return p
}

// admit counts r as Select does and reports whether Select keeps it.
func (p *picker) admit(r *Session) bool {
	if p.s.Project != "" && (!r.HeaderKnown || filepath.Clean(r.Snapshot.Header.Cwd) != p.s.Project) {
		return false
	}
	if r.State == StateError {
		p.out.Unreadable++
	}
	if len(p.s.States) > 0 && !slices.Contains(p.s.States, r.State) {
		return false
	}
	if p.s.Active.IsSet() && !r.ActiveIn(p.s.Active) {
		return false
	}
	if r.State == StateBlank && !p.s.All && !slices.Contains(p.s.States, StateBlank) {
		p.out.Hidden++
		return false
	}
	return true
}

// ActiveIn reports whether r may have been active in span: created at or
// before its Until, and updated (UpdatedAt, list's UPDATED) at or after
// its Since. A session is left out only when that is proven: one whose
// last prompt is not known (the scan for it ran out of budget, or the log
// cannot be read) counts as updated now, and one whose header cannot be
// read is kept.
func (r *Session) ActiveIn(span timespec.Range) bool {
	if !r.HeaderKnown {
		return true
	}
	created := r.Snapshot.Header.CreatedAt
	updated := r.UpdatedAt()
	if !r.MetaKnown || !r.Meta.LastPromptKnown {
		updated = math.MaxInt64 // a prompt after it may not have been read
	}
	return span.Meets(created, max(created, updated))
}

// reserve makes room for n rows to keep when there is no Limit: one
// block, as a slice of every row would be, rather than a small object per
// row, which would also start the heap small and make the GC run many
// more times while it grows.
func (p *picker) reserve(n int) {
	if p.s.Limit <= 0 {
		p.block = make([]Session, 0, n)
		p.out.Rows = make([]*Session, 0, n)
	}
}

// add is keep for a row of its own.
func (p *picker) add(r Session) {
	if p.s.Limit > 0 || len(p.block) == cap(p.block) {
		p.keep(&r)
	} else if p.admit(&r) {
		p.block = append(p.block, r)
		p.out.Rows = append(p.out.Rows, &p.block[len(p.block)-1])
	}
}

// keep selects r, which it may keep.
func (p *picker) keep(r *Session) {
	switch {
	case !p.admit(r):
	case p.s.Limit <= 0:
		p.out.Rows = append(p.out.Rows, r)
	case len(p.last.rows) < p.s.Limit:
		p.last.push(r)
	case p.order(r, p.last.rows[0]) < 0:
		p.last.pop()
		p.last.push(r)
	}
}

// result is the Selection: the rows kept, in order.
func (p *picker) result() Selected {
	if p.s.Limit > 0 {
		p.out.Rows = p.last.rows
	}
	SortRows(p.out.Rows, p.s.Sort)
	return p.out
}

// A RowSink receives the rows ListStream selects, in order.
type RowSink interface {
	// Row takes the next row; Flush is called when no other row is ready,
	// so that a buffered sink shows what it has.
	Row(*Session) error
	Flush() error
}

// streamWindow bounds how far ahead of the first session not yet read
// ListStream reads (and holds rows) when it streams.
const streamWindow = 64

// ListStream gives sink the rows ListSelect(ctx, svc, o, s) returns, in the
// same order. When the order is known from the sessions' headers (Sort
// "created") and svc is a seam.OrderedLister, it reads the sessions in
// that order and gives each row as soon as every row before it is known,
// holding at most a few dozen rows besides those of sessions whose header
// cannot be read (those sort last); it then stops reading once Limit rows
// are given, unless o.Count. Otherwise it gives the rows once all are
// read. The counts of the Selected it returns (its Rows are nil) are of
// the sessions read.
func ListStream(ctx context.Context, svc seam.Service, o ListOptions, s Selection, sink RowSink) (Selected, error) {
	ol, ok := svc.(seam.OrderedLister)
	if !ok || s.Sort != "created" {
		sel, err := ListSelect(ctx, svc, o, s)
		if err != nil {
			return Selected{}, err
		}
		for _, r := range sel.Rows {
			if err := sink.Row(r); err != nil {
				return Selected{}, err
			}
		}
		sel.Rows = nil
		return sel, sink.Flush()
	}
	all := s
	all.Limit = 0 // the stream stops at the limit itself
	st := &stream{p: newPicker(all), limit: s.Limit, count: o.Count, sink: sink}
	st.cond = sync.NewCond(&st.mu)
	ctx, st.cancel = context.WithCancel(ctx)
	defer st.cancel()
	err := ol.ListOpenOrdered(ctx, func(heads []seam.Entry) []int {
		return st.order(heads, o.Progress)
	}, func(i int, en seam.Entry, h seam.Handle, err error) {
		if !st.wait(i) {
			return
		}
		r := row(ctx, en, h, err, o.MaxBytes)
		st.step()
		st.done(i, &r)
	})
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.err != nil:
		return Selected{}, st.err
	case st.stopped && !st.count:
		return st.p.out, nil // the limit is reached: the listing was cut short
	case err != nil:
		return Selected{}, err
	}
	// Every session is read: what is held is final.
	st.flush(true)
	if st.err != nil {
		return Selected{}, st.err
	}
	return st.p.out, nil
}

// stream puts the rows of an ordered listing back in order, each row as
// soon as it is final.
type stream struct {
	p      *picker
	limit  int
	count  bool
	sink   RowSink
	cancel func()
	step   func()
	// heads are the entries in the order they are visited: their sort
	// keys as their headers give them.
	heads []place

	mu   sync.Mutex
	cond *sync.Cond
	// next is the position of the first session not read yet: the rows
	// of those before it are taken (selected, counted, held in ready or
	// given), those after it that are read wait in early.
	next  int
	early map[int]*Session
	ready rowHeap
	given int
	// stopped: no more rows are given (the limit is reached, or the sink
	// failed with err).
	stopped bool
	err     error
}

// place is what SortRows orders a row by: its sort key (larger first),
// id and location.
type place struct {
	key      int64
	id, path string
}

func placeOf(r *Session, by string) place {
	return place{sortKey(r, by), r.ID(), r.Snapshot.Location.Path}
}

// order sorts heads as SortRows would sort their rows, and returns that
// order.
func (st *stream) order(heads []seam.Entry, progress func(int) func()) []int {
	keys := make([]place, len(heads))
	perm := make([]int, len(heads))
	for i := range heads {
		keys[i] = placeOf(&Session{Snapshot: heads[i].Snapshot, HeaderKnown: heads[i].Err == nil}, "created")
		perm[i] = i
	}
	slices.SortFunc(perm, func(a, b int) int { return keys[a].compare(&keys[b]) })
	st.heads = make([]place, len(perm))
	for pos, i := range perm {
		st.heads[pos] = keys[i]
	}
	st.early = make(map[int]*Session)
	st.ready.order = st.p.order
	st.step = func() {}
	if progress != nil {
		st.step = progress(len(heads))
	}
	return perm
}

func (k *place) compare(o *place) int {
	return cmp.Or(cmp.Compare(o.key, k.key), strings.Compare(k.id, o.id), strings.Compare(k.path, o.path))
}

// wait holds the visit of position i until it is within streamWindow of
// the first not read yet; it reports whether the session is still to be
// read.
func (st *stream) wait(i int) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i >= st.next+streamWindow && !st.ended() {
		st.cond.Wait()
	}
	return !st.ended()
}

// ended reports whether no more sessions are to be read: no more rows are
// given, and the sessions left are not to be counted.
func (st *stream) ended() bool { return st.stopped && (!st.count || st.err != nil) }

// done takes the row r of position i and gives whatever is final.
func (st *stream) done(i int, r *Session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.early[i] = r
	for {
		r, ok := st.early[st.next]
		if !ok {
			break
		}
		delete(st.early, st.next)
		st.next++
		if st.p.admit(r) && !st.stopped {
			st.ready.push(r)
		}
	}
	st.cond.Broadcast()
	st.flush(false)
}

// flush gives the rows that are final: all of them when the listing is
// over. Else a session sorts where its header put it unless its row
// cannot be read in full (its creation time is then unknown: key 0, see
// sortKey), so a row whose key is positive is final once it sorts before
// the first session not read yet; one whose key is not waits for the end.
func (st *stream) flush(over bool) {
	gave := false
	for len(st.ready.rows) > 0 && !st.stopped {
		r := st.ready.rows[0]
		if !over && st.next < len(st.heads) {
			k := placeOf(r, "created")
			if k.key <= 0 || k.compare(&st.heads[st.next]) >= 0 {
				break
			}
		}
		st.ready.pop()
		gave = true
		if st.err = st.sink.Row(r); st.err != nil {
			st.stop()
			return
		}
		if st.given++; st.limit > 0 && st.given == st.limit {
			st.stop()
		}
	}
	if gave {
		if st.err = st.sink.Flush(); st.err != nil {
			st.stop()
		}
	}
}

// stop gives no more rows, and ends the listing unless the sessions left
// are still to be counted.
func (st *stream) stop() {
	st.stopped = true
	st.ready.rows = nil
	if st.ended() {
		st.cancel()
	}
	st.cond.Broadcast()
}

// rowHeap is a heap of rows, the first of order at its root.
type rowHeap struct {
	rows  []*Session
	order func(a, b *Session) int
}

func (h *rowHeap) push(r *Session) {
	h.rows = append(h.rows, r)
	for i := len(h.rows) - 1; i > 0; {
		up := (i - 1) / 2
		if h.order(h.rows[i], h.rows[up]) >= 0 {
			break
		}
		h.rows[i], h.rows[up] = h.rows[up], h.rows[i]
		i = up
	}
}

func (h *rowHeap) pop() {
	n := len(h.rows) - 1
	h.rows[0] = h.rows[n]
	h.rows[n] = nil
	h.rows = h.rows[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.order(h.rows[c+1], h.rows[c]) < 0 {
			c++
		}
		if h.order(h.rows[c], h.rows[i]) >= 0 {
			break
		}
		h.rows[i], h.rows[c] = h.rows[c], h.rows[i]
		i = c
	}
}

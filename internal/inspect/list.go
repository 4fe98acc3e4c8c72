package inspect

import (
	"cmp"
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dshctl/dshctl/internal/seam"
)

// States of a session, one word each, as list and stat name them.
const (
	StateBlank = "blank" // proven to hold no turn
	StateOpen  = "open"  // its last turn has no turn/end
	StateDone  = "done"
	StateError = "error" // dsh cannot read it (Session.Err says why)
)

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
	if err := listEach(ctx, svc, o, func(int) {}, p.add); err != nil {
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
	return func(a, b *Session) int { return compareKeys(sortKey(a, by), a, sortKey(b, by), b) }
}

// compareKeys is SortRows' order of a and b, whose sort keys are ka and kb.
func compareKeys(ka int64, a *Session, kb int64, b *Session) int {
	return cmp.Or(cmp.Compare(kb, ka), strings.Compare(a.ID(), b.ID()),
		strings.Compare(a.Snapshot.Location.Path, b.Snapshot.Location.Path))
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
}

func newPicker(s Selection) *picker { return &picker{s: s, order: rowOrder(s.Sort)} }

// admit counts r as Select does and reports whether Select keeps it.
func (p *picker) admit(r *Session) bool {
	if p.s.Project != "" && (!r.HeaderKnown || filepath.Clean(r.Snapshot.Header.Cwd) != p.s.Project) {
		return false
	}
	if r.State == StateError {
		p.out.Unreadable++
	}
	if r.State == StateBlank && !p.s.All {
		p.out.Hidden++
		return false
	}
	return true
}

// add is keep for a row of its own.
func (p *picker) add(r Session) { p.keep(&r) }

// keep selects r, which it may keep.
func (p *picker) keep(r *Session) {
	if !p.admit(r) {
		return
	}
	rows := p.out.Rows
	switch {
	case p.s.Limit <= 0:
		p.out.Rows = append(rows, r)
	case len(rows) < p.s.Limit:
		rows = append(rows, r)
		p.out.Rows = rows
		for i := len(rows) - 1; i > 0; {
			up := (i - 1) / 2
			if p.order(rows[i], rows[up]) <= 0 {
				break
			}
			rows[i], rows[up] = rows[up], rows[i]
			i = up
		}
	case p.order(r, rows[0]) < 0:
		rows[0] = r
		for i := 0; ; {
			c := 2*i + 1
			if c >= len(rows) {
				break
			}
			if c+1 < len(rows) && p.order(rows[c+1], rows[c]) > 0 {
				c++
			}
			if p.order(rows[c], rows[i]) <= 0 {
				break
			}
			rows[i], rows[c] = rows[c], rows[i]
			i = c
		}
	}
}

// result is the Selection: the rows kept, in order.
func (p *picker) result() Selected {
	SortRows(p.out.Rows, p.s.Sort)
	return p.out
}

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
	var (
		mu   sync.Mutex
		rows []Session
		step = func() {}
	)
	start := func(n int) {
		rows = make([]Session, 0, n)
		if o.Progress != nil {
			step = o.Progress(n)
		}
	}
	add := func(r Session) {
		mu.Lock()
		rows = append(rows, r)
		mu.Unlock()
		step()
	}
	if ol, ok := svc.(seam.OpenLister); ok {
		// The handles belong to ListOpen, which closes them.
		err := ol.ListOpen(ctx, start, func(en seam.Entry, h seam.Handle, err error) {
			add(row(ctx, en, h, err, o.MaxBytes))
		})
		return rows, err
	}
	entries, err := svc.List(ctx)
	if err != nil {
		return nil, err
	}
	start(len(entries))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(entries), 2*runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(entries) {
					return
				}
				add(openRow(ctx, svc, entries[i], o.MaxBytes))
			}
		})
	}
	wg.Wait()
	return rows, ctx.Err()
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
	key := func(r *Session) int64 {
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
	slices.SortFunc(rows, func(a, b *Session) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), strings.Compare(a.ID(), b.ID()),
			strings.Compare(a.Snapshot.Location.Path, b.Snapshot.Location.Path))
	})
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
	var out Selected
	out.Rows = make([]*Session, 0, len(rows))
	for i := range rows {
		r := &rows[i]
		if s.Project != "" && (!r.HeaderKnown || filepath.Clean(r.Snapshot.Header.Cwd) != s.Project) {
			continue
		}
		if r.State == StateError {
			out.Unreadable++
		}
		if r.State == StateBlank && !s.All {
			out.Hidden++
			continue
		}
		out.Rows = append(out.Rows, r)
	}
	SortRows(out.Rows, s.Sort)
	if s.Limit > 0 && len(out.Rows) > s.Limit {
		out.Rows = out.Rows[:s.Limit]
	}
	return out
}

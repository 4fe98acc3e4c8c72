package inspect

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
)

// orderedSession is a session of an orderedStore: the entry its header
// gives, the entry a full read gives, and its log (nil: it cannot be
// opened).
type orderedSession struct {
	head, full seam.Entry
	events     []seam.Event
}

// orderedStore is a seam.OrderedLister whose visits run on a few
// goroutines, positions taken in order, each after a random pause, as a
// backend's would.
type orderedStore struct {
	seam.Service
	sessions []orderedSession
	workers  int
	seed     uint64
	// started counts the visits begun; onFirstRow, set by a test, reads it.
	started atomic.Int64
}

var errOpen = errors.New("cannot open")

func (s *orderedStore) handle(o *orderedSession) (seam.Handle, error) {
	if o.events == nil {
		return nil, errOpen
	}
	h := newFake(o.full.Snapshot.Header.CreatedAt, 4, o.events...)
	h.Head = o.full.Snapshot.Header
	return h, nil
}

func (s *orderedStore) ListOpenOrdered(ctx context.Context, order func([]seam.Entry) []int, visit func(int, seam.Entry, seam.Handle, error)) error {
	heads := make([]seam.Entry, len(s.sessions))
	for i := range s.sessions {
		heads[i] = s.sessions[i].head
	}
	perm := order(heads)
	if err := seam.CheckOrder(perm, len(heads)); err != nil {
		return err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range s.workers {
		rnd := rand.New(rand.NewPCG(s.seed, uint64(w)))
		wg.Go(func() {
			for ctx.Err() == nil {
				pos := int(next.Add(1) - 1)
				if pos >= len(perm) {
					return
				}
				s.started.Add(1)
				if rnd.IntN(8) == 0 {
					time.Sleep(time.Duration(rnd.IntN(100)) * time.Microsecond)
				}
				o := &s.sessions[perm[pos]]
				if o.full.Err != nil {
					visit(pos, o.full, nil, nil)
					continue
				}
				h, err := s.handle(o)
				visit(pos, o.full, h, err)
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// randomStore is n sessions, some blank, some of other projects, some
// whose header cannot be read and some whose header can but not the rest
// (they then sort last), with creation times that often tie.
func randomStore(rnd *rand.Rand, n int) *orderedStore {
	turn := []seam.Event{ev(0, 10, "turn/start", `{"turn":1}`), ev(1, 11, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`)}
	s := &orderedStore{workers: 1 + rnd.IntN(4), seed: rnd.Uint64()}
	for i := range n {
		h := seam.Header{Version: 4, ID: fmt.Sprintf("s%03d", rnd.IntN(n)), CreatedAt: rnd.Int64N(int64(n)) - 2, // negative: no backend gives one, but the order must hold
			Cwd: []string{"/p", "/q"}[rnd.IntN(2)]}
		e := seam.Entry{Snapshot: seam.Snapshot{Header: h, SizeBytes: int64(i), Location: seam.Location{Path: fmt.Sprintf("/store/%d", i)}}}
		o := orderedSession{head: e, full: e, events: []seam.Event{}}
		switch rnd.IntN(10) {
		case 0: // the header cannot be read
			o.head.Err = seam.ErrCorrupt
			o.full.Err = o.head.Err
		case 1: // the tail cannot be read
			o.full.Err = seam.ErrCorrupt
		case 2:
			o.events = nil
		case 3, 4:
		default:
			o.events = turn
		}
		s.sessions = append(s.sessions, o)
	}
	return s
}

// want is what ListSelect gives for the rows of s: Select over every row
// a full read gives.
func (s *orderedStore) want(t *testing.T, sel Selection) Selected {
	rows := make([]Session, len(s.sessions))
	for i := range s.sessions {
		o := &s.sessions[i]
		if o.full.Err != nil {
			rows[i] = row(t.Context(), o.full, nil, nil, 0)
			continue
		}
		h, err := s.handle(o)
		rows[i] = row(t.Context(), o.full, h, err, 0)
	}
	return Select(rows, sel)
}

type sinkFunc struct {
	rows    []*Session
	onRow   func()
	flushes int
	fail    error
}

func (k *sinkFunc) Row(r *Session) error {
	if k.onRow != nil {
		k.onRow()
	}
	k.rows = append(k.rows, r)
	return k.fail
}

func (k *sinkFunc) Flush() error { k.flushes++; return nil }

func names(rows []*Session) (out []string) {
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s@%s", r.ID(), r.Snapshot.Location.Path))
	}
	return out
}

// TestListStreamAgreesWithSelect: rows streamed in the order of their
// headers come out as ListSelect gives them, whatever the flags, the
// sessions whose tail cannot be read (which sort last) and the order the
// reads finish in; with a limit (and no Count) the listing stops early.
func TestListStreamAgreesWithSelect(t *testing.T) {
	rnd := rand.New(rand.NewPCG(15, 2))
	for range 200 {
		s := randomStore(rnd, 1+rnd.IntN(200))
		sel := Selection{All: rnd.IntN(2) == 0, Project: []string{"", "/p"}[rnd.IntN(2)], Sort: "created", Limit: rnd.IntN(len(s.sessions) + 2)}
		count := rnd.IntN(2) == 0
		want := s.want(t, sel)
		var sink sinkFunc
		got, err := ListStream(t.Context(), s, ListOptions{Count: count}, sel, &sink)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(sink.rows), names(want.Rows)) {
			t.Fatalf("%+v (count %v): streamed\n%v\nwant\n%v", sel, count, names(sink.rows), names(want.Rows))
		}
		if got.Rows != nil || (count || sel.Limit == 0 || len(want.Rows) < sel.Limit) && (got.Hidden != want.Hidden || got.Unreadable != want.Unreadable) {
			t.Fatalf("%+v (count %v): %d hidden, %d unreadable, want %d, %d", sel, count, got.Hidden, got.Unreadable, want.Hidden, want.Unreadable)
		}
		if len(sink.rows) > 0 && sink.flushes == 0 {
			t.Fatal("rows given but never flushed")
		}
	}
}

// TestListStreamEarly: the first row is given once the sessions before
// it are read, not after the whole store; the reads run at most a window
// ahead; a limit stops the listing.
func TestListStreamEarly(t *testing.T) {
	const n = 2000
	s := &orderedStore{workers: 4, seed: 1}
	for i := range n {
		h := seam.Header{Version: 4, ID: fmt.Sprintf("s%04d", i), CreatedAt: int64(1 + i%997)}
		s.sessions = append(s.sessions, orderedSession{head: seam.Entry{Snapshot: seam.Snapshot{Header: h}},
			full: seam.Entry{Snapshot: seam.Snapshot{Header: h}}, events: []seam.Event{ev(0, 10, "turn/start", `{"turn":1}`)}})
	}
	var first int64 = -1
	sink := sinkFunc{onRow: func() {
		if first < 0 {
			first = s.started.Load()
		}
	}}
	if _, err := ListStream(t.Context(), s, ListOptions{}, Selection{Sort: "created"}, &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.rows) != n || first < 1 || first > streamWindow+int64(s.workers) {
		t.Fatalf("%d rows; %d reads begun at the first row, want at most %d", len(sink.rows), first, streamWindow+s.workers)
	}
	// Until the third row is given, the first session not read is at
	// most the third: reads run up to a window past it, and every worker
	// but the one reading it may hold one more position, waiting.
	const limit = 3
	s.started.Store(0)
	sink = sinkFunc{}
	if _, err := ListStream(t.Context(), s, ListOptions{}, Selection{Sort: "created", Limit: limit}, &sink); err != nil {
		t.Fatal(err)
	}
	if most := limit - 1 + streamWindow + int64(s.workers) - 1; len(sink.rows) != limit || s.started.Load() > most {
		t.Fatalf("--limit %d: %d rows after %d reads, want at most %d", limit, len(sink.rows), s.started.Load(), most)
	}
	// A sink that fails ends the listing with its error.
	s.started.Store(0)
	broken := errors.New("broken pipe")
	if _, err := ListStream(t.Context(), s, ListOptions{}, Selection{Sort: "created"}, &sinkFunc{fail: broken}); !errors.Is(err, broken) || s.started.Load() > streamWindow+int64(s.workers) {
		t.Fatalf("failing sink: %v after %d reads", err, s.started.Load())
	}
}

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
)

// longSession stores session "l" of n events whose payloads are about
// size bytes, in a new database of schema.
func longSession(t *testing.T, schema, n, size int) *Store {
	t.Helper()
	s := newStore(t, schema, Options{})
	h, err := s.Create(ctx, seam.Header{Version: 0, ID: "l", CreatedAt: 1785331618000, Cwd: "/w"}, seam.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for from := 0; from < n; from += 500 {
		batch := make([]seam.Event, min(500, n-from))
		for i := range batch {
			seq := int64(from + i)
			batch[i] = seam.Event{Type: "session/title", Seq: seq, Time: 1785331618500 + seq,
				Data: []byte(fmt.Sprintf(`{"title":"%d %s"}`, seq, strings.Repeat("x", size)))}
		}
		if err := h.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// settled waits until the goroutines are back to n: the prefetchers of
// finished scans are gone.
func settled(t *testing.T, n int) {
	t.Helper()
	for range 200 {
		if runtime.NumGoroutine() <= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines, want %d: a scan left one behind", runtime.NumGoroutine(), n)
}

// TestScanStops checks the ways a forward scan on the direct connection
// ends early: the consumer stops, ctx is cancelled (mid-step included),
// the budget runs out. Each ends promptly, leaves no goroutine behind and
// the next scan reads the whole session.
func TestScanStops(t *testing.T) {
	for _, schema := range []int{Schema14, Schema17} {
		s := longSession(t, schema, 3000, 2000)
		h, err := s.Open(ctx, "l", seam.Read)
		if err != nil {
			t.Fatal(err)
		}
		base := runtime.NumGoroutine()
		all := func() {
			t.Helper()
			n := 0
			for _, err := range h.Scan(ctx, seam.ScanOptions{Transient: true}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != 3000 {
				t.Fatalf("schema %d: %d events, want 3000", schema, n)
			}
		}
		all()

		n := 0
		for _, err := range h.Scan(ctx, seam.ScanOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 10 {
				break
			}
		}
		settled(t, base)
		all()

		for _, after := range []int{0, 1, 700} {
			c, cancel := context.WithCancel(ctx)
			n, start := 0, time.Now()
			var got error
			for _, err := range h.Scan(c, seam.ScanOptions{}) {
				if err != nil {
					got = err
					break
				}
				if n == after {
					cancel()
				}
				n++
			}
			cancel()
			if !errors.Is(got, context.Canceled) || time.Since(start) > 5*time.Second || n > after+1 {
				t.Fatalf("schema %d, cancelled after %d: %v after %d events", schema, after, got, n)
			}
			settled(t, base)
			all()
		}

		var budget error
		n = 0
		for _, err := range h.Scan(ctx, seam.ScanOptions{MaxBytes: 100 << 10}) {
			if err != nil {
				budget = err
				break
			}
			n++
		}
		if !errors.Is(budget, seam.ErrScanBudget) || n == 0 || n > 60 {
			t.Fatalf("schema %d: budget: %v after %d events", schema, budget, n)
		}
		settled(t, base)
		all()
		h.Close()
	}
}

// TestDirectInterrupt cancels a statement in the middle of a step: the
// step returns, the scan fails with ctx's error, and the interrupted
// connection is not used again.
func TestDirectInterrupt(t *testing.T) {
	s := longSession(t, Schema14, 200, 10)
	c, cancel := context.WithCancel(ctx)
	rows, err := s.queryDirect(c, "SELECT seq, type, time, data, source_event_seqs, surface_op, NULL FROM events WHERE session_id = ?1 ORDER BY seq", false, "l")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := rows.next(); err != nil || r == nil || r.Seq != 0 {
		t.Fatalf("first row: %v %v", r, err)
	}
	d := rows.d
	cancel()
	<-rows.fired // the interrupt ran
	if _, err := rows.next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("after the interrupt: %v", err)
	}
	rows.close()
	if !d.interrupted || d.db != 0 {
		t.Fatal("the interrupted connection went back to the pool")
	}
	if got, err := s.Stat(ctx, "l"); err != nil || got.EventCount != 200 {
		t.Fatalf("Stat after: %+v %v", got, err)
	}
}

// TestDirectPoolClosed checks that a store closed while a scan runs closes
// the scan's connection when the scan gives it back.
func TestDirectPoolClosed(t *testing.T) {
	s := longSession(t, Schema14, 100, 10)
	d, err := s.getDirect()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.putDirect(d)
	if d.db != 0 || len(s.direct.idle) != 0 {
		t.Fatal("a connection outlived its store")
	}
}

package search

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dshctl/dshctl/internal/seam"
)

// Source is a session to search: its id in a store.
type Source struct {
	Service seam.Service
	ID      string
}

// Visit searches one session, the job-th in order: e describes it (its
// Err says why it cannot be read; then h is nil), h reads it, unless it
// could not be opened (err). The handle is closed when Visit returns.
type Visit func(job int, e seam.Entry, h seam.Handle, err error)

// EachSession calls visit for each session of svc, several at a time: the
// newest first (by the creation time in its header, then by id: the
// order of `dshctl list --sort created`), a session whose header cannot
// be read last. The job-th visit starts only once every visit before it
// started.
func EachSession(ctx context.Context, svc seam.Service, visit Visit) error {
	if ol, ok := svc.(seam.OrderedLister); ok {
		return ol.ListOpenOrdered(ctx, newestFirst, func(i int, e seam.Entry, h seam.Handle, err error) {
			visit(i, e, h, err)
		})
	}
	entries, err := svc.List(ctx)
	if err != nil {
		return err
	}
	perm := newestFirst(entries)
	sources := make([]Source, len(perm))
	for i, j := range perm {
		sources[i] = Source{svc, entries[j].Snapshot.Header.ID}
	}
	return EachSource(ctx, sources, func(i int, e seam.Entry, h seam.Handle, err error) {
		if en := entries[perm[i]]; en.Err != nil {
			e, h, err = en, nil, nil
		}
		visit(i, e, h, err)
	})
}

// newestFirst orders the entries of a listing newest first, unreadable
// headers last.
func newestFirst(heads []seam.Entry) []int {
	perm := make([]int, len(heads))
	for i := range perm {
		perm[i] = i
	}
	key := func(e *seam.Entry) int64 {
		if e.Err != nil {
			return -1 << 63
		}
		return e.Snapshot.Header.CreatedAt
	}
	slices.SortFunc(perm, func(a, b int) int {
		x, y := &heads[a], &heads[b]
		return cmp.Or(cmp.Compare(key(y), key(x)),
			strings.Compare(x.Snapshot.Header.ID, y.Snapshot.Header.ID),
			strings.Compare(x.Snapshot.Location.Path, y.Snapshot.Location.Path))
	})
	return perm
}

// EachSource calls visit for each source, in order, several at a time,
// each with a read handle of the session (closed when visit returns) or
// the error that opening it gave. The job-th visit starts only once every
// visit before it started.
func EachSource(ctx context.Context, sources []Source, visit Visit) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(sources), Workers()) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(sources) {
					return
				}
				s := sources[i]
				e := seam.Entry{Snapshot: seam.Snapshot{Header: seam.Header{ID: s.ID}}}
				h, err := s.Service.Open(ctx, s.ID, seam.Read)
				if err == nil {
					e.Snapshot.Header = h.Header()
				}
				visit(i, e, h, err)
				if h != nil {
					h.Close()
				}
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// Workers is how many sessions a search reads at a time: searching is
// bound by decoding, so one per CPU, and one more to read while another
// waits.
func Workers() int { return runtime.GOMAXPROCS(0) + 1 }

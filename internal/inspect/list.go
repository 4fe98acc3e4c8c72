package inspect

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
)

// Time is a timestamp as dshctl's JSON output gives it: RFC 3339 in UTC,
// and the epoch milliseconds dsh stores.
type Time struct {
	Time string `json:"time"`
	Ms   int64  `json:"ms"`
}

// TimeOf returns the Time of epoch ms.
func TimeOf(ms int64) *Time {
	return &Time{Time: time.UnixMilli(ms).UTC().Format(time.RFC3339Nano), Ms: ms}
}

// States of a session, as list and stat name them.
const (
	StateBlank    = "blank"
	StateOpenTurn = "open turn"
	StateDone     = "done"
	StateError    = "error" // the session cannot be read
)

// State names the state of a readable session.
func State(blank bool, open *OpenTurn) string {
	switch {
	case blank:
		return StateBlank
	case open != nil:
		return StateOpenTurn
	}
	return StateDone
}

// ListRow is one session as `list` shows it, in its JSON shape.
type ListRow struct {
	ID                 string        `json:"id"`
	Project            string        `json:"project,omitempty"`
	CreatedAt          *Time         `json:"createdAt,omitempty"`
	UpdatedAt          *Time         `json:"updatedAt,omitempty"`
	UpdatedApproximate bool          `json:"updatedApproximate"`
	LastPromptAt       *Time         `json:"lastPromptAt"`
	EventCount         *int64        `json:"eventCount,omitempty"` // nil when unreadable
	SizeBytes          int64         `json:"sizeBytes"`
	State              string        `json:"state"`
	Blank              bool          `json:"blank"`
	OpenTurn           *OpenTurn     `json:"openTurn,omitempty"`
	Origin             string        `json:"origin,omitempty"`
	ParentSession      string        `json:"parentSession,omitempty"`
	Version            int           `json:"version"`
	Location           seam.Location `json:"location"`
	Revision           string        `json:"revision,omitempty"`
	Error              string        `json:"error,omitempty"`
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
func List(ctx context.Context, svc seam.Service, o ListOptions) ([]ListRow, error) {
	var (
		mu   sync.Mutex
		rows []ListRow
		step = func() {}
	)
	start := func(n int) {
		rows = make([]ListRow, 0, n)
		if o.Progress != nil {
			step = o.Progress(n)
		}
	}
	add := func(r ListRow) {
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
func openRow(ctx context.Context, svc seam.Service, en seam.Entry, budget int64) ListRow {
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
func row(ctx context.Context, en seam.Entry, h seam.Handle, openErr error, budget int64) ListRow {
	s := en.Snapshot
	r := ListRow{
		ID:            s.Header.ID,
		Project:       s.Header.Cwd,
		SizeBytes:     s.SizeBytes,
		Origin:        s.Header.Origin,
		ParentSession: s.Header.ParentSession,
		Version:       s.Header.Version,
		Location:      s.Location,
		Revision:      s.Revision,
	}
	if s.Header.CreatedAt > 0 || en.Err == nil {
		r.CreatedAt = TimeOf(s.Header.CreatedAt)
		r.UpdatedAt = r.CreatedAt
	}
	fail := func(err error) ListRow {
		r.State, r.Error = StateError, err.Error()
		r.Blank = false
		return r
	}
	if en.Err != nil {
		return fail(en.Err)
	}
	n := s.EventCount // not &s.EventCount, which keeps a copy of the whole snapshot alive per row
	r.EventCount = &n
	if openErr != nil {
		return fail(openErr)
	}
	meta, err := ReadMeta(ctx, h, MetaOptions{MaxBytes: budget})
	if err != nil {
		return fail(err)
	}
	r.Blank = meta.Blank
	r.OpenTurn = meta.OpenTurn
	r.UpdatedAt = TimeOf(meta.UpdatedAt)
	r.UpdatedApproximate = meta.Approximate
	if meta.LastPromptAt > 0 {
		r.LastPromptAt = TimeOf(meta.LastPromptAt)
	}
	r.State = State(meta.Blank, meta.OpenTurn)
	return r
}

// SortKeys are the orders SortRows knows.
var SortKeys = []string{"created", "updated", "size", "events"}

// SortRows orders rows newest or largest first by key (one of SortKeys;
// "updated" for any other), then by id and location: a total order, so the
// result does not depend on the order List returned them in.
func SortRows(rows []*ListRow, by string) {
	ms := func(t *Time) int64 {
		if t == nil {
			return 0
		}
		return t.Ms
	}
	key := func(r *ListRow) int64 {
		switch by {
		case "created":
			return ms(r.CreatedAt)
		case "size":
			return r.SizeBytes
		case "events":
			if r.EventCount == nil {
				return -1
			}
			return *r.EventCount
		}
		return ms(r.UpdatedAt)
	}
	slices.SortFunc(rows, func(a, b *ListRow) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), strings.Compare(a.ID, b.ID),
			strings.Compare(a.Location.Path, b.Location.Path))
	})
}

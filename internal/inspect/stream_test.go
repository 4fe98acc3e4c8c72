package inspect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/timespec"
)

// record is a Sink that writes what it is given as short lines.
type record struct{ bytes.Buffer }

func (r *record) Header(h *seam.Header) error { r.WriteString("header " + h.ID + "\n"); return nil }
func (r *record) Event(e *seam.Event) error {
	r.WriteString(e.Type + "\n")
	return nil
}
func (r *record) Closers(n int) error { r.WriteString("closers\n"); return nil }
func (r *record) End() error          { r.WriteString("end\n"); return nil }
func (r *record) Flush() error        { return nil }

func TestStream(t *testing.T) {
	ctx := context.Background()
	open := renumber([]seam.Event{
		ev(0, 10, "turn/start", `{"turn":1}`),
		ev(0, 11, "step/start", `{"turn":1,"step":1}`),
		ev(0, 12, "session/title", `{"title":"t"}`),
	})
	for _, c := range []struct {
		name    string
		o       StreamOptions
		want    string
		closers int
	}{
		{"all", StreamOptions{}, "header fake\nturn/start\nstep/start\nsession/title\nend\n", 0},
		{"filtered", StreamOptions{Filter: FilterOptions{Types: []string{"step/*", "session/*"}, From: 2}}, "header fake\nsession/title\nend\n", 0},
		{"closers", StreamOptions{Closers: true}, "header fake\nturn/start\nstep/start\nsession/title\nclosers\nstep/end\nturn/end\nend\n", 2},
		{"filtered closers", StreamOptions{Closers: true, Filter: FilterOptions{Types: []string{"turn/*"}}}, "header fake\nturn/start\nclosers\nturn/end\nend\n", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r record
			res, err := Stream(ctx, newFake(1, 4, open...), c.o, &r)
			if err != nil || r.String() != c.want || res.Closers != c.closers {
				t.Fatalf("Stream: %v, %d closers, gave\n%s\nwant\n%s", err, res.Closers, r.String(), c.want)
			}
		})
	}

	// A turn the log does not have is an error naming the turns it has.
	for turn, want := range map[int64]string{
		0: "turn 0 not found: the log has 1 turn, turn 1",
		2: "turn 2 not found: the log has 1 turn, turn 1",
	} {
		var r record
		_, err := Stream(ctx, newFake(1, 4, open...), StreamOptions{Filter: FilterOptions{Turn: turn, HasTurn: true}}, &r)
		var te *TurnError
		if !errors.As(err, &te) || err.Error() != want {
			t.Errorf("--turn %d: %v, want %q", turn, err, want)
		}
	}

	// A bad filter is refused before anything is given.
	var r record
	_, err := Stream(ctx, newFake(1, 4, open...), StreamOptions{Filter: FilterOptions{Types: []string{"["}}}, &r)
	var fe *FilterError
	if !errors.As(err, &fe) || fe.Field != "Types" || fe.Pattern != "[" || r.Len() != 0 {
		t.Fatalf("bad pattern: %v, gave %q", err, r.String())
	}

	// Events of unknown types are given, then refused as dsh would.
	plugin := renumber([]seam.Event{
		ev(0, 10, "turn/start", `{"turn":1}`),
		ev(0, 11, "roleplay/requested", `{}`),
		ev(0, 12, "roleplay/requested", `{}`),
		ev(0, 13, "mystery/event", `{}`),
		ev(0, 14, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`),
	})
	r.Reset()
	_, err = Stream(ctx, newFake(1, 4, plugin...), StreamOptions{}, &r)
	var ut *UnknownTypesError
	if !errors.As(err, &ut) || !errors.Is(err, seam.ErrUnsupportedFormat) || ut.First != 1 || ut.Version != 4 ||
		ut.Types["roleplay/requested"] != 2 || ut.Types["mystery/event"] != 1 || strings.Count(r.String(), "\n") != 7 {
		t.Fatalf("unknown types: %v (%+v), gave\n%s", err, ut, r.String())
	}
}

func TestStatsMetaIsExact(t *testing.T) {
	c := newStatsCollector(4)
	for _, e := range renumber([]seam.Event{
		ev(0, 10, "turn/start", `{"turn":1}`),
		ev(0, 20, "user/message", `{"id":"u","role":"user","content":[],"source":{"kind":"user"}}`),
	}) {
		c.Observe(&e)
	}
	s := c.Stats()
	m := s.Meta(5)
	if m.Blank || m.Approximate || m.LastPromptAt != 20 || m.UpdatedAt != 20 || m.OpenTurn == nil {
		t.Fatalf("Meta of an open turn with a prompt: %+v", m)
	}
	if m := (&Stats{}).Meta(5); !m.Blank || m.UpdatedAt != 5 || m.Approximate {
		t.Fatalf("Meta of an empty log: %+v", m)
	}
}

func TestSortRows(t *testing.T) {
	row := func(id string, created, updated, size, events int64, path string) *Session {
		s := &Session{Snapshot: seam.Snapshot{Header: seam.Header{ID: id, CreatedAt: created}, SizeBytes: size,
			EventCount: events, Location: seam.Location{Path: path}}, HeaderKnown: true, MetaKnown: true}
		s.Meta.UpdatedAt = updated
		return s
	}
	unreadable := &Session{Snapshot: seam.Snapshot{Header: seam.Header{ID: "c"}, SizeBytes: 7}, State: StateError}
	rows := []*Session{
		row("b", 1, 9, 5, 1, ""),
		row("a", 2, 3, 7, 8, ""),
		unreadable,
		row("a", 2, 3, 7, 8, "/0"),
	}
	for by, want := range map[string]string{
		"updated": "b a a c", "created": "a a b c", "size": "a a c b", "events": "a a b c", "other": "b a a c",
	} {
		SortRows(rows, by)
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID())
		}
		if got := strings.Join(ids, " "); got != want {
			t.Errorf("SortRows(%s) = %s, want %s", by, got, want)
		}
		if by == "created" && rows[0].Snapshot.Location.Path != "" {
			t.Errorf("SortRows(%s): equal rows not ordered by location", by)
		}
	}
}

// seqRecord is a Sink that keeps the seqs and data it is given.
type seqRecord struct{ bytes.Buffer }

func (r *seqRecord) Header(*seam.Header) error { return nil }
func (r *seqRecord) Event(e *seam.Event) error {
	fmt.Fprintf(r, "%d %s %s\n", e.Seq, e.Type, e.Data)
	return nil
}
func (r *seqRecord) Closers(int) error { return nil }
func (r *seqRecord) End() error        { return nil }
func (r *seqRecord) Flush() error      { return nil }

// TestStreamLast: -n N gives the last N events of those the filters pass,
// as filtering the whole log and keeping its end would; read backward
// unless a turn is asked for, and with the events' data intact though
// the scan reuses its buffers.
func TestStreamLast(t *testing.T) {
	ctx := context.Background()
	var events []seam.Event
	types := []string{"tool/call", "tool/result", "session/title", "step/start"}
	for turn := int64(1); turn <= 5; turn++ {
		events = append(events, ev(0, 0, "turn/start", fmt.Sprintf(`{"turn":%d}`, turn)))
		for k := range 7 {
			events = append(events, ev(0, 0, types[(k+int(turn))%len(types)], fmt.Sprintf(`{"turn":%d,"k":%d}`, turn, k)))
		}
		events = append(events, ev(0, 0, "turn/end", fmt.Sprintf(`{"turn":%d}`, turn)))
	}
	events = renumber(events)
	for i := range events {
		events[i].Time = 1000 + int64(i%13)*10 // times that do not grow with seq
	}
	filters := []FilterOptions{
		{},
		{Types: []string{"tool/*"}},
		{From: 10, To: 30, HasTo: true},
		{Turn: 3, HasTurn: true},
		{Turn: 4, HasTurn: true, Types: []string{"tool/result"}},
		{Time: timespec.Range{Since: 1050, HasSince: true, Until: 1090, HasUntil: true}},
		{From: 40, Types: []string{"session/title"}},
	}
	for _, fo := range filters {
		var all seqRecord
		if _, err := Stream(ctx, newFake(1, 4, events...), StreamOptions{Filter: fo}, &all); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(all.String(), "\n")
		lines = lines[:len(lines)-1]
		for _, n := range []int64{0, 1, 3, 8, 1000} {
			h := newFake(1, 4, events...)
			var got seqRecord
			if _, err := Stream(ctx, h, StreamOptions{Filter: fo, Last: n, HasLast: true}, &got); err != nil {
				t.Fatal(err)
			}
			want := strings.Join(lines[max(0, len(lines)-int(n)):], "")
			if got.String() != want {
				t.Errorf("%+v -n %d:\n got %s\nwant %s", fo, n, got.String(), want)
			}
		}
	}
}

// racedHandle is a fakeHandle whose scans from seq failFrom on fail with
// ErrCorrupt failures times, as a read does that a writer cuts a torn
// tail under; each failure changes the revision when changes says so, and
// after the failures the appended events are there.
type racedHandle struct {
	*fakeHandle
	failFrom    int64
	failures    int
	changes     bool
	rev         int
	appended    []seam.Event
	mu          sync.Mutex
	scansFailed int
}

func (r *racedHandle) Snapshot(ctx context.Context) (seam.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.fakeHandle.Snapshot(ctx)
	s.Revision = fmt.Sprint(r.rev)
	return s, err
}

func (r *racedHandle) Scan(ctx context.Context, o seam.ScanOptions) iter.Seq2[seam.Event, error] {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o.From >= r.failFrom && r.scansFailed < r.failures {
		r.scansFailed++
		if r.changes {
			r.rev++
		}
		return func(yield func(seam.Event, error) bool) {
			yield(seam.Event{}, &seam.Error{Kind: seam.ErrCorrupt, Op: "read", Pos: seam.NoPos, Err: errors.New("frame failed validation")})
		}
	}
	if o.From >= r.failFrom && r.appended != nil {
		r.Events = append(r.Events, r.appended...)
		r.appended = nil
	}
	return r.fakeHandle.Scan(ctx, o)
}

// TestFollowRereadsWhatChanged: a poll of -f whose read fails while the
// log changes under it (a concurrent append that repairs a torn frame) is
// read again at the next poll; a failure on a log that did not change is
// the error it is; and an interrupted follow ends with the context's error
// (exit 1, as any command), not as a success (issue 24 item 10).
func TestFollowRereadsWhatChanged(t *testing.T) {
	open := renumber([]seam.Event{
		ev(0, 10, "turn/start", `{"turn":1}`),
		ev(0, 11, "step/start", `{"turn":1,"step":1}`),
	})
	more := []seam.Event{ev(2, 12, "session/title", `{"title":"t"}`)}
	for _, c := range []struct {
		name    string
		changes bool
		want    string
		err     error
	}{
		{"changed", true, "header fake\nturn/start\nstep/start\nend\nsession/title\n", context.Canceled},
		{"stable", false, "header fake\nturn/start\nstep/start\nend\n", seam.ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &racedHandle{fakeHandle: newFake(1, 4, open...), failFrom: 2, failures: 3, changes: c.changes, appended: more}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &followSink{seen: make(chan struct{}), want: "session/title"}
			done := make(chan error, 1)
			go func() {
				_, err := Stream(ctx, h, StreamOptions{Follow: true, Poll: time.Millisecond}, r)
				done <- err
			}()
			select {
			case <-r.seen:
				cancel()
			case err := <-done:
				done <- err
			case <-time.After(10 * time.Second):
				t.Fatal("follow neither printed the appended event nor ended")
			}
			err := <-done
			if !errors.Is(err, c.err) || r.String() != c.want {
				t.Errorf("follow: %v, printed\n%s\nwant %v and\n%s", err, r.String(), c.err, c.want)
			}
		})
	}
}

// followSink is a record Sink that closes seen once it is given an event of
// type want.
type followSink struct {
	record
	mu   sync.Mutex
	want string
	seen chan struct{}
}

func (w *followSink) Event(e *seam.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.record.Event(e)
	if e.Type == w.want {
		close(w.seen)
	}
	return nil
}

func (w *followSink) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.record.String()
}

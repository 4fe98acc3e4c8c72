package search

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
)

// fakeHandle is an in-memory read handle whose Scan gives its events, then
// err (if set).
type fakeHandle struct {
	seam.Handle
	header seam.Header
	events []seam.Event
	err    error
	// delay is slept before each event, to shuffle parallel searches.
	delay time.Duration
}

func (h *fakeHandle) Header() seam.Header { return h.header }
func (h *fakeHandle) Close() error        { return nil }

func (h *fakeHandle) Scan(ctx context.Context, o seam.ScanOptions) iter.Seq2[seam.Event, error] {
	return func(yield func(seam.Event, error) bool) {
		for _, e := range h.events {
			if e.Seq < o.From {
				continue
			}
			time.Sleep(h.delay)
			if err := ctx.Err(); err != nil {
				yield(seam.Event{}, err)
				return
			}
			if !yield(e, nil) {
				return
			}
		}
		if h.err != nil {
			yield(seam.Event{}, h.err)
		}
	}
}

// fakeService opens the fake handles by id.
type fakeService struct {
	seam.Service
	handles map[string]*fakeHandle
}

func (s *fakeService) Open(_ context.Context, id string, _ seam.Access) (seam.Handle, error) {
	h, ok := s.handles[id]
	if !ok {
		return nil, &seam.Error{Kind: seam.ErrNotFound, ID: id}
	}
	return h, nil
}

func ev(seq int64, typ, data string) seam.Event {
	return seam.Event{Seq: seq, Type: typ, Time: 1000 + seq, Data: []byte(data)}
}

// session is a small log: a title before any turn, two turns, events
// between them.
func session() []seam.Event {
	return []seam.Event{
		ev(0, "session/title", `{"title":"Fix the build"}`),
		ev(1, "turn/start", `{"turn":1}`),
		ev(2, "user/message", `{"content":[{"type":"text","text":"the build fails:\nTypeError: x is undefined\nsee build.sh"}],"source":{"kind":"user"}}`),
		ev(3, "tool/result", `{"callId":"c1","output":"line 1\nbuild.sh: TypeError\nBUILD.SH ok"}`),
		ev(4, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`),
		ev(5, "session/title", `{"title":"build.sh fixed"}`),
		ev(6, "turn/start", `{"turn":2}`),
		ev(7, "user/message", `{"content":[{"type":"text","text":"thanks \u0062uild.sh"}]}`),
		ev(8, "turn/end", `{"turn":2}`),
	}
}

type hit struct {
	Seq, Turn int64
	HasTurn   bool
	Type      string
	Field     string
	Line      int
	Text      string
	Spans     [][]int
}

func search(t *testing.T, h seam.Handle, o Options) []hit {
	t.Helper()
	var out []hit
	n, err := Session(context.Background(), h, &o, func(m *Match) error {
		out = append(out, hit{m.Seq, m.Turn, m.HasTurn, m.Type, m.Field, m.Line, string(m.Text), slices.Clone(m.Spans)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(out) {
		t.Errorf("Session returned %d, gave %d", n, len(out))
	}
	return out
}

func mustCompile(t *testing.T, expr string, o PatternOptions) *Pattern {
	t.Helper()
	p, err := Compile(expr, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSession(t *testing.T) {
	h := &fakeHandle{events: session()}
	got := search(t, h, Options{Pattern: mustCompile(t, `build\.sh`, PatternOptions{})})
	want := []hit{
		{2, 1, true, "user/message", ".data.content[0].text", 3, "see build.sh", [][]int{{4, 12}}},
		{3, 1, true, "tool/result", ".data.output", 2, "build.sh: TypeError", [][]int{{0, 8}}},
		{5, 0, false, "session/title", ".data.title", 1, "build.sh fixed", [][]int{{0, 8}}},
		{7, 2, true, "user/message", ".data.content[0].text", 1, "thanks build.sh", [][]int{{7, 15}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("build\\.sh:\n got %v\nwant %v", got, want)
	}

	// -i, a type filter, a time range, a maximum.
	got = search(t, h, Options{Pattern: mustCompile(t, `build\.sh`, PatternOptions{IgnoreCase: true}), Types: []string{"tool/*"}})
	if len(got) != 2 || got[0].Text != "build.sh: TypeError" || got[1].Text != "BUILD.SH ok" {
		t.Errorf("-i --type tool/*: %v", got)
	}
	got = search(t, h, Options{Pattern: mustCompile(t, `build`, PatternOptions{}), Since: 1003, HasSince: true, Until: 1005, HasUntil: true})
	if len(got) != 2 || got[0].Seq != 3 || got[1].Seq != 5 {
		t.Errorf("--since/--until: %v", got)
	}
	got = search(t, h, Options{Pattern: mustCompile(t, `build`, PatternOptions{}), Max: 2})
	if len(got) != 2 || got[0].Seq != 0 || got[1].Seq != 2 {
		t.Errorf("Max 2: %v", got)
	}

	// Keys, numbers and the envelope are not text; --in json matches them.
	if got := search(t, h, Options{Pattern: mustCompile(t, `callId|turn|completed`, PatternOptions{})}); len(got) != 1 || got[0].Text != "completed" {
		t.Errorf("text holds keys or numbers: %v", got)
	}
	got = search(t, h, Options{Pattern: mustCompile(t, `"turn":2`, PatternOptions{}), In: InJSON})
	if len(got) != 2 || got[0].Seq != 6 || got[0].Field != "" || got[0].Line != 0 ||
		got[0].Text != `{"type":"turn/start","seq":6,"time":1006,"data":{"turn":2}}` {
		t.Errorf("--in json: %v", got)
	}
}

func TestSessionErrors(t *testing.T) {
	bad := errors.New("damaged")
	h := &fakeHandle{events: session(), err: bad}
	p := mustCompile(t, "build", PatternOptions{})
	var seqs []int64
	n, err := Session(context.Background(), h, &Options{Pattern: p}, func(m *Match) error {
		seqs = append(seqs, m.Seq)
		return nil
	})
	if !errors.Is(err, bad) || n != 6 || len(seqs) != 6 {
		t.Errorf("a failing scan: %d, %v; want the matches before it and its error", n, err)
	}
	// The function's error ends the search; ErrStop ends it quietly.
	stop := errors.New("stop")
	if _, err := Session(context.Background(), h, &Options{Pattern: p}, func(*Match) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn's error: %v", err)
	}
	if n, err := Session(context.Background(), h, &Options{Pattern: p}, func(*Match) error { return ErrStop }); err != nil || n != 1 {
		t.Errorf("ErrStop: %d, %v", n, err)
	}
}

// recorder is a Printer that keeps what is written, in order.
type recorder struct {
	mu   sync.Mutex
	out  []string
	jobs []int
}

func (r *recorder) Write(job int, b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out = append(r.out, string(b))
	r.jobs = append(r.jobs, job)
	return nil
}

func (r *recorder) Fail(job int, err error) error {
	return r.Write(job, []byte("FAIL "+err.Error()+"\n"))
}

func (r *recorder) Match(dst []byte, s *SessionInfo, m *Match, first bool) []byte {
	return fmt.Appendf(dst, "%s %d %q\n", s.ID, m.Seq, m.Text)
}

func (r *recorder) File(dst []byte, s *SessionInfo) []byte { return fmt.Appendf(dst, "%s\n", s.ID) }

func (r *recorder) Count(dst []byte, s *SessionInfo, n int) []byte {
	return fmt.Appendf(dst, "%s %d\n", s.ID, n)
}

// TestRunOrder: whatever the timing of the parallel searches, the output
// is in the order of the sessions, each one's matches in seq order, and
// a session that cannot be read is reported in its place.
func TestRunOrder(t *testing.T) {
	svc := &fakeService{handles: map[string]*fakeHandle{}}
	var sources []Source
	var want strings.Builder
	for i := range 12 {
		id := fmt.Sprintf("s%02d", i)
		sources = append(sources, Source{svc, id})
		if i == 5 {
			want.WriteString(`FAIL session "s05": ` + (&seam.Error{Kind: seam.ErrNotFound, ID: id}).Error() + "\n")
			continue // not in the store
		}
		var events []seam.Event
		for s := range int64(40 + i*7) {
			events = append(events, ev(s, "user/message", fmt.Sprintf(`{"text":"%s needle %d"}`, id, s)))
			fmt.Fprintf(&want, "%s %d %q\n", id, s, fmt.Sprintf("%s needle %d", id, s))
		}
		svc.handles[id] = &fakeHandle{header: seam.Header{ID: id}, events: events,
			delay: time.Duration(rand.IntN(40)) * time.Microsecond}
	}
	p := mustCompile(t, "needle", PatternOptions{})
	for range 5 {
		r := &recorder{}
		res, err := Run(context.Background(), func(ctx context.Context, v Visit) error { return EachSource(ctx, sources, v) },
			RunOptions{Options: Options{Pattern: p}}, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(r.out, ""); got != want.String() {
			t.Fatalf("output out of order:\n%s\nwant\n%s", got, want.String())
		}
		if res.Failed != 1 || res.Matched != 11 || res.Searched != 11 {
			t.Errorf("result %+v", res)
		}
	}
	r := &recorder{}
	if _, err := Run(context.Background(), func(ctx context.Context, v Visit) error { return EachSource(ctx, sources, v) },
		RunOptions{Options: Options{Pattern: p}, Mode: Count}, r); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.out, ""); !strings.HasPrefix(got, "s00 40\ns01 47\n") || !strings.HasSuffix(got, "s11 117\n") {
		t.Errorf("-c:\n%s", got)
	}
	r = &recorder{}
	res, err := Run(context.Background(), func(ctx context.Context, v Visit) error { return EachSource(ctx, sources, v) },
		RunOptions{Options: Options{Pattern: p}, Mode: Quiet}, r)
	if err != nil || len(r.out) != 0 || res.Lines == 0 {
		t.Errorf("-q: %v %q %+v", err, r.out, res)
	}
}

// TestOrderedBounded: a job that is not first holds at most laneCap of
// output, then waits for its turn.
func TestOrderedBounded(t *testing.T) {
	r := &recorder{}
	o := newOrdered(r)
	piece := make([]byte, 64<<10)
	done := make(chan struct{})
	go func() {
		for range 20 { // 1.25 MiB: more than a lane holds
			o.write(1, piece)
		}
		o.done(1)
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	o.mu.Lock()
	held := o.held[1].size
	o.mu.Unlock()
	if held > laneCap {
		t.Errorf("job 1 holds %d bytes, more than %d", held, laneCap)
	}
	select {
	case <-done:
		t.Fatal("job 1 ended before job 0")
	default:
	}
	o.write(0, []byte("first"))
	o.done(0)
	<-done
	if r.out[0] != "first" || len(r.out) != 21 || r.jobs[20] != 1 {
		t.Errorf("order: %d pieces, first %q", len(r.out), r.out[0])
	}
}

package reconcile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Shard is the K-th of N parts of a suite (1 ≤ K ≤ N), so that N CI runners
// split it: a trace is in the part whose number is its position, counted
// from 0, mod N, plus 1. The zero Shard holds everything.
type Shard struct{ K, N int }

// ParseShard parses "K/N".
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want K/N, as in 2/4", s)
	}
	sh := Shard{}
	var err1, err2 error
	sh.K, err1 = strconv.Atoi(k)
	sh.N, err2 = strconv.Atoi(n)
	if err1 != nil || err2 != nil || sh.N < 1 || sh.K < 1 || sh.K > sh.N {
		return Shard{}, fmt.Errorf("shard %q: want K/N with 1 ≤ K ≤ N, as in 2/4", s)
	}
	return sh, nil
}

// Has reports whether the trace at position pos belongs to the shard.
func (s Shard) Has(pos int) bool { return s.N <= 1 || pos%s.N == s.K-1 }

// String returns "K/N", or "" for the whole suite.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N)
}

// Count returns how many of the first m positions the shard holds.
func (s Shard) Count(m int) int {
	if s.N <= 1 {
		return m
	}
	if m < s.K {
		return 0
	}
	return (m-s.K)/s.N + 1
}

// File is a file of a suite: a JSONL trace or a browser capture. Open is
// called when the file is read (a trace file's meta record is read first,
// then the file again as it is replayed). Stdin: the JSONL trace of
// standard input, which Open gives once.
type File struct {
	Path  string
	Open  func() (io.ReadCloser, error)
	Stdin bool
}

// Loaded is what LoadSuite read: the traces of the shard, in position order,
// and how many traces the whole suite holds.
type Loaded struct {
	Traces []*Trace
	Total  int
}

// LoadSuite reads files as one suite: sorted by path, a trace file counts
// one position and a capture one per tab (sorted by tab id), and only the
// traces of shard are kept. A file that cannot be read or decoded counts
// one position, a Trace whose Err says why. A trace file outside the shard is not decoded;
// a capture is, since its tabs are only known then. A name for each trace
// file comes from its meta record or its file name.
func LoadSuite(files []File, shard Shard) (Loaded, error) {
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	var out Loaded
	for i, f := range files {
		if i > 0 && files[i-1].Path == f.Path {
			continue
		}
		traces, err := loadFile(f, shard, out.Total)
		if err != nil {
			// A file that cannot be read is a result of its own, in
			// one position; the others still run.
			traces = []*Trace{nil}
			if shard.Has(out.Total) {
				traces[0] = &Trace{Name: traceName(f.Path), Source: f.Path, Err: err}
			}
		}
		for _, t := range traces {
			if t != nil {
				out.Traces = append(out.Traces, t)
			}
			out.Total++
		}
	}
	return out, nil
}

// loadFile reads one file whose first trace has position pos. A trace file
// outside the shard gives one nil trace.
func loadFile(f File, shard Shard, pos int) ([]*Trace, error) {
	if hasTraceExt(f.Path) || f.Stdin {
		// Replayed while it is decoded (Run).
		if !shard.Has(pos) {
			return []*Trace{nil}, nil
		}
		if f.Stdin {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			return []*Trace{ReadTrace(f.Path, rc)}, nil
		}
		return []*Trace{OpenTrace(f.Path, f.Open)}, nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	traces, _, err := DecodeFile(rc, f.Path, func(k int) bool { return shard.Has(pos + k) })
	return traces, err
}

// DecodeFile reads a file of a suite: a browser capture (a .har name, or a
// JSON document rather than JSONL) gives one trace per tab, a JSONL trace
// one trace; want(k) says whether the k-th is wanted, the others being
// left nil (a trace file that is not wanted is not decoded). Errors name
// the file.
func DecodeFile(r io.Reader, path string, want func(k int) bool) (traces []*Trace, capture bool, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	capture = IsCaptureName(path)
	if !capture && !hasTraceExt(path) {
		head, err := br.Peek(4 << 10)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		capture = LooksLikeCapture(head)
	}
	if capture {
		traces, err := DecodeCapture(br, path)
		if err != nil {
			return nil, true, err
		}
		for k := range traces {
			if want != nil && !want(k) {
				traces[k] = nil
			}
		}
		return traces, true, nil
	}
	if want != nil && !want(0) {
		return []*Trace{nil}, false, nil
	}
	t, err := decodeTrace(br, traceName(path), lineCount(r))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	t.Source = path
	return []*Trace{t}, false, nil
}

func hasTraceExt(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".jsonl") }

// traceName is the name of a trace file without a meta name: its base name
// without .jsonl.
func traceName(path string) string {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	if hasTraceExt(base) {
		base = base[:len(base)-len(".jsonl")]
	}
	return base
}

// RunTraces replays traces as opts says on workers goroutines (0: one per
// CPU) and gives each result to yield, in the order of traces. It stops at
// the first error yield returns, or when ctx is done.
func RunTraces(ctx context.Context, traces []*Trace, opts Options, workers int, yield func(int, Result) error) error {
	opts.Context = ctx
	return ordered(ctx, len(traces), workers, func(i int) Result {
		return Run(traces[i], opts)
	}, func(i int, r Result) error {
		// A replay the context stopped is no result.
		if err := ctx.Err(); err != nil {
			return err
		}
		return yield(i, r)
	})
}

// GenOptions says which generated traces RunGenerated runs.
type GenOptions struct {
	Seed    uint64
	Count   int   // the traces of one run: indices 0 … Count-1
	Shard   Shard // the part of them to run
	Policy  Policy
	Workers int // 0: one per CPU
	// Timeline: Options.Timeline for the replay of each shrunk failure.
	Timeline int
}

// Generated is the outcome of one generated trace. A trace that fails is
// shrunk: Trace is the shrunk trace and Result its replay.
type Generated struct {
	Index     int
	Result    Result
	Trace     *Trace // the shrunk trace of a failure; nil when it passed
	Invariant int    // the invariant the generated trace failed first, 0 when it passed
	// SelfContained: Trace carries every answer the backend model gave
	// and fails the same way with it off (ShrinkSelfContained); false for
	// a failure only the model's answers show.
	SelfContained bool
}

// RunGenerated generates the traces of opts's shard, replays and checks each
// under opts.Policy, shrinks every failure to a minimal trace and replays
// that, and gives each outcome to yield in index order. It stops at the
// first error yield returns, or when ctx is done.
func RunGenerated(ctx context.Context, opts GenOptions, yield func(Generated) error) error {
	pol := opts.Policy
	if pol.Name == "" {
		pol = Membership
	}
	n := opts.Shard.Count(opts.Count)
	index := func(k int) int {
		if opts.Shard.N <= 1 {
			return k
		}
		return opts.Shard.K - 1 + k*opts.Shard.N
	}
	return ordered(ctx, n, opts.Workers, func(k int) Generated {
		i := index(k)
		t := Generate(opts.Seed, i, pol)
		res := Run(t, Options{Policy: pol})
		g := Generated{Index: i, Result: res}
		if v := res.First(); v != nil {
			g.Invariant = v.Invariant
			g.Trace, g.SelfContained = ShrinkSelfContained(t, pol, v.Invariant)
			g.Result = Run(g.Trace, Options{Policy: pol, NoBackend: g.SelfContained, Timeline: opts.Timeline})
		}
		return g
	}, func(_ int, g Generated) error { return yield(g) })
}

// ordered computes do(0) … do(n-1) on workers goroutines and gives the
// results to yield in order. At most a few results per worker wait for the
// ones before them, so memory stays bounded however large n is.
func ordered[T any](ctx context.Context, n, workers int, do func(int) T, yield func(int, T) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers = min(workers, n); workers <= 1 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := yield(i, do(i)); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		i int
		v T
	}
	// A token per job dispatched and not yet yielded.
	tokens := make(chan struct{}, 8*workers)
	jobs := make(chan int)
	results := make(chan result, workers)
	var wg sync.WaitGroup
	wg.Add(workers + 1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		for i := range n {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer wg.Done()
			for i := range jobs {
				select {
				case results <- result{i, do(i)}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	held := map[int]T{}
	var err error
	for next := 0; next < n && err == nil; {
		select {
		case r := <-results:
			held[r.i] = r.v
		case <-ctx.Done():
			err = ctx.Err()
			continue
		}
		for v, ok := held[next]; ok && err == nil; v, ok = held[next] {
			delete(held, next)
			err = yield(next, v)
			<-tokens
			next++
		}
	}
	cancel()
	wg.Wait()
	return err
}

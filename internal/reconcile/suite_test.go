package reconcile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"1/1": {1, 1}, "2/4": {2, 4}, "4/4": {4, 4}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "3", "0/3", "4/3", "-1/3", "1/0", "a/b", "1/2/3", " 1/2"} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestShardCount(t *testing.T) {
	for n := 1; n <= 5; n++ {
		for k := 1; k <= n; k++ {
			s := Shard{k, n}
			for m := range 23 {
				want := 0
				for i := range m {
					if s.Has(i) {
						want++
					}
				}
				if got := s.Count(m); got != want {
					t.Fatalf("%s of %d: %d, want %d", s, m, got, want)
				}
			}
		}
	}
}

// memFiles serves files from memory and counts the opens.
func memFiles(contents map[string][]byte, opened map[string]int) []File {
	var files []File
	for path, b := range contents {
		files = append(files, File{Path: path, Open: func() (io.ReadCloser, error) {
			opened[path]++
			return io.NopCloser(bytes.NewReader(b)), nil
		}})
	}
	return files
}

// TestLoadSuiteShards: shards 1/3, 2/3 and 3/3 of a suite of trace files
// and captures hold every trace and capture tab exactly once, in the order
// of the whole suite; a trace file of another shard is not opened.
func TestLoadSuiteShards(t *testing.T) {
	contents := map[string][]byte{}
	for _, p := range traceFiles(t)[:5] {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		contents["suite/"+filepath.Base(p)] = b
	}
	contents["suite/capture.har"] = buildCapture(loadTrace(t, filepath.Join(tracesDir, "s3-queued-survives-seal.jsonl")))
	contents["suite/notes.json"] = buildCapture(loadTrace(t, filepath.Join(tracesDir, "s1-seal-folds-live-turn.jsonl")))
	opened := map[string]int{}
	whole, err := LoadSuite(memFiles(contents, opened), Shard{})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Total != 5+2+2 || len(whole.Traces) != whole.Total {
		t.Fatalf("%d traces of %d", len(whole.Traces), whole.Total)
	}
	id := func(tr *Trace) string { return tr.Source + "#" + tr.Tab }
	var all, union []string
	for _, tr := range whole.Traces {
		all = append(all, id(tr))
	}
	if !slices.IsSorted(all) {
		t.Errorf("not in path order: %v", all)
	}
	for k := 1; k <= 3; k++ {
		clear(opened)
		part, err := LoadSuite(memFiles(contents, opened), Shard{k, 3})
		if err != nil {
			t.Fatal(err)
		}
		if part.Total != whole.Total {
			t.Errorf("shard %d/3 counts %d traces", k, part.Total)
		}
		for _, tr := range part.Traces {
			union = append(union, id(tr))
		}
		for path, n := range opened {
			if strings.HasSuffix(path, ".jsonl") && !slices.ContainsFunc(part.Traces, func(tr *Trace) bool { return tr.Source == path }) {
				t.Errorf("shard %d/3 opened %s (%d times), which it does not run", k, path, n)
			}
		}
	}
	slices.Sort(union)
	if !slices.Equal(all, union) {
		t.Fatalf("shards hold %v\nthe suite %v", union, all)
	}
}

// TestRunGeneratedShards: the shards of --generate M run each index once,
// and results come in index order.
func TestRunGeneratedShards(t *testing.T) {
	const m = 25
	var seen []int
	for k := 1; k <= 3; k++ {
		last := -1
		err := RunGenerated(context.Background(), GenOptions{Seed: 9, Count: m, Shard: Shard{k, 3}, Workers: 3}, func(g Generated) error {
			if g.Index <= last || g.Index%3 != k-1 {
				t.Errorf("shard %d/3 gave index %d after %d", k, g.Index, last)
			}
			if g.Result.Source != GeneratedSource(9, g.Index) {
				t.Errorf("index %d: source %q", g.Index, g.Result.Source)
			}
			last = g.Index
			seen = append(seen, g.Index)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(seen)
	if len(seen) != m || seen[0] != 0 || seen[m-1] != m-1 || slices.Compact(seen)[m-1] != m-1 {
		t.Fatalf("indices %v", seen)
	}
}

// TestOrdered: results come in order whatever the workers finish first; an
// error from yield, or a cancelled context, stops the run.
func TestOrdered(t *testing.T) {
	var got []int
	err := ordered(context.Background(), 200, 4, func(i int) int {
		if i%7 == 0 {
			for range 10000 {
				_ = strings.Repeat("x", i%3)
			}
		}
		return i * i
	}, func(i, v int) error {
		if v != i*i {
			t.Errorf("result %d is %d", i, v)
		}
		got = append(got, i)
		return nil
	})
	if err != nil || len(got) != 200 || !slices.IsSorted(got) {
		t.Fatalf("%v, %d results", err, len(got))
	}
	stop := errors.New("stop")
	n := 0
	if err := ordered(context.Background(), 1000, 4, func(i int) int { return i }, func(i, _ int) error {
		n++
		if i == 10 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || n != 11 {
		t.Fatalf("stopping: %v after %d", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ordered(ctx, 1000, 4, func(i int) int { return i }, func(int, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

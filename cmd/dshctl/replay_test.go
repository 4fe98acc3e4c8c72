package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/reconcile"
	"github.com/dshctl/dshctl/internal/termui"
)

// replayLines runs replay with -o jsonl and returns each result's source
// and tab, and the exit code.
func replayLines(t *testing.T, args ...string) ([]string, int) {
	t.Helper()
	out, stderr, code := runCLI(t, append([]string{"replay", "-o", "jsonl"}, args...)...)
	if stderr != "" {
		t.Fatalf("stderr: %s", stderr)
	}
	var runs []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct{ Name, Source, Tab string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
		}
		runs = append(runs, r.Source+" | "+r.Tab+" | "+r.Name)
	}
	return runs, code
}

// TestReplayShards: --shard 1/3, 2/3 and 3/3 together run every trace, every
// capture tab and every generated trace of the unsharded run exactly once,
// and each shard's JUnit report counts only its own.
func TestReplayShards(t *testing.T) {
	suite := []string{"--generate", "40", "--seed", "5", "../../testdata/traces", "../../testdata/captures"}
	all, code := replayLines(t, suite...)
	if code != termui.ExitOK {
		t.Fatalf("unsharded run exits %d", code)
	}
	traces, _ := filepath.Glob("../../testdata/traces/*.jsonl")
	captures, _ := filepath.Glob("../../testdata/captures/*.har")
	tabs := 0 // a trace per tab of each capture
	for _, c := range captures {
		f, err := os.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		trs, err := reconcile.DecodeCapture(f, c)
		f.Close()
		if err != nil || len(trs) < 2 {
			t.Fatalf("%s: %d tabs, %v", c, len(trs), err)
		}
		tabs += len(trs)
	}
	if want := len(traces) + tabs + 40; len(all) != want {
		t.Fatalf("unsharded run: %d results, want %d (one per trace, capture tab and generated trace)", len(all), want)
	}
	var union []string
	dir := t.TempDir()
	for _, k := range []string{"1", "2", "3"} {
		report := filepath.Join(dir, "junit-"+k+".xml")
		part, code := replayLines(t, append([]string{"--shard", k + "/3", "--junit", report}, suite...)...)
		if code != termui.ExitOK {
			t.Fatalf("shard %s/3 exits %d", k, code)
		}
		// Files (traces and capture tabs) and generated traces are each
		// dealt round-robin.
		sh, _ := reconcile.ParseShard(k + "/3")
		if n, want := len(part), sh.Count(len(traces)+tabs)+sh.Count(40); n != want {
			t.Errorf("shard %s/3 runs %d of %d, want %d", k, n, len(all), want)
		}
		union = append(union, part...)
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests  int `xml:"tests,attr"`
			Suites []struct {
				Name  string     `xml:"name,attr"`
				Cases []struct{} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("shard %s/3 JUnit: %v", k, err)
		}
		if doc.Tests != len(part) || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != len(part) || !strings.Contains(doc.Suites[0].Name, "shard "+k+"/3") {
			t.Errorf("shard %s/3 JUnit: %d tests, suites %+v; want %d", k, doc.Tests, doc.Suites, len(part))
		}
	}
	slices.Sort(all)
	slices.Sort(union)
	if !slices.Equal(all, union) {
		t.Fatalf("the shards ran %d traces, the whole suite %d:\nshards: %v\nsuite:  %v", len(union), len(all), union, all)
	}
	for i := 1; i < len(union); i++ {
		if union[i] == union[i-1] {
			t.Fatalf("%s ran twice", union[i])
		}
	}
}

package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/reconcile"
	"github.com/dshctl/dshctl/internal/termui"
)

// repo is the repository's testdata folder, which holds recorded traces and
// captures.
const repo = "../../testdata"

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(files []reconcile.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// TestFiles: a folder stands for its *.jsonl and *.har files (any case,
// not its subfolders or other files); a file stands for itself whatever
// its name; a folder without any trace is a *NoTracesError; a missing path
// fails.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.jsonl", "B.HAR", "notes.txt", "sub/c.jsonl"} {
		writeFile(t, filepath.Join(dir, "suite", name), "{}\n")
	}
	writeFile(t, filepath.Join(dir, "other.txt"), "{}\n")
	files, err := Files([]string{filepath.Join(dir, "suite"), filepath.Join(dir, "other.txt")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "suite", "B.HAR"), filepath.Join(dir, "suite", "a.jsonl"), filepath.Join(dir, "other.txt")}
	if got := paths(files); !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	rc, err := files[2].Open()
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()

	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	var hint termui.HintError
	if _, err := Files([]string{empty}); !errors.As(err, &hint) || err.Error() != "replay: no *.jsonl traces or *.har captures in "+empty {
		t.Fatalf("empty folder: %v", err)
	}
	missing := filepath.Join(dir, "missing.jsonl")
	if _, err := Files([]string{missing}); !errors.As(err, &hint) || err.Error() != "replay: "+missing+": no such trace, capture or folder" {
		t.Fatalf("missing file: %v", err)
	}
}

// TestRunCountsAndReports: Run replays the suite, gives every result to
// Result in order, counts verdicts, keeps the listed results only when
// asked, and drives the progress callback once per trace.
func TestRunCountsAndReports(t *testing.T) {
	files, err := Files([]string{repo + "/traces"})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := reconcile.PolicyByName("bug-d")
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		var total, steps int
		var seen []string
		rep, err := Run(context.Background(), files, Options{Policy: pol, KeepResults: keep,
			Progress: func(n int) func() { total = n; return func() { steps++ } },
			Result: func(r reconcile.Result, listed bool) error {
				if !listed {
					t.Errorf("recorded trace %s not listed", r.Name)
				}
				seen = append(seen, r.Source)
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Traces != len(files) || total != len(files) || steps != len(files) || len(seen) != len(files) {
			t.Fatalf("%d traces, progress %d/%d, %d results; want %d", rep.Traces, steps, total, len(seen), len(files))
		}
		if rep.Failed == 0 || rep.Passed+rep.Failed+rep.Inconclusive != rep.Traces || rep.Policy != "bug-d" {
			t.Fatalf("report %+v", rep)
		}
		if !slices.IsSorted(seen) {
			t.Errorf("results out of path order: %q", seen)
		}
		if keep && len(rep.Results) != rep.Traces || !keep && len(rep.Results) != 0 || rep.Results == nil {
			t.Errorf("keep=%v: %d results kept", keep, len(rep.Results))
		}
	}

	// An error from Result stops the run and is returned.
	stop := errors.New("stop")
	if _, err := Run(context.Background(), files, Options{Policy: pol, Result: func(reconcile.Result, bool) error { return stop }}); !errors.Is(err, stop) {
		t.Fatalf("Result's error: %v", err)
	}
}

// TestRunGeneratedSavesFailures: failing generated traces are shrunk,
// listed, counted and saved to a file that reproduces the failure; the
// JUnit report holds every trace; the summary says where they went.
func TestRunGeneratedSavesFailures(t *testing.T) {
	dir := t.TempDir()
	pol, err := reconcile.PolicyByName("bug-b")
	if err != nil {
		t.Fatal(err)
	}
	save, junit := filepath.Join(dir, "saved"), filepath.Join(dir, "report.xml")
	listed := 0
	rep, err := Run(context.Background(), nil, Options{Policy: pol, Generate: 20, Seed: 1, Save: save, JUnit: junit,
		Result: func(r reconcile.Result, l bool) error {
			if l != (r.Verdict == reconcile.Fail) {
				t.Errorf("%s: %s, listed %v", r.Name, r.Verdict, l)
			}
			if l {
				listed++
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.Generated
	// One file per distinct shrunk trace.
	if g == nil || g.Count != 20 || g.Of != 20 || g.Failed == 0 || g.Failed != listed || len(g.Saved)+g.Duplicates != g.Failed ||
		g.Duplicates == 0 || rep.Traces != 20 {
		t.Fatalf("report %+v, generated %+v", rep, g)
	}
	contents := map[string]string{}
	for _, p := range g.Saved {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, recs, _ := strings.Cut(string(b), "\n") // after the meta record
		if q, ok := contents[recs]; ok {
			t.Errorf("%s and %s hold the same trace", q, p)
		}
		contents[recs] = p
		// Every answer is in the file: it fails the same way with the
		// backend model off.
		f := []reconcile.File{{Path: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }}}
		alone, err := Run(context.Background(), f, Options{Policy: pol, NoBackend: true})
		if err != nil || alone.Failed != 1 {
			t.Errorf("%s with the backend model off: %+v, %v", p, alone, err)
		}
	}
	b, err := os.ReadFile(g.Saved[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"reproduce":"dshctl replay --policy bug-b --no-backend `+g.Saved[0]+`"`) {
		t.Errorf("saved trace has no reproduce line:\n%s", b)
	}
	again, err := Run(context.Background(), []reconcile.File{{Path: g.Saved[0], Open: func() (io.ReadCloser, error) { return os.Open(g.Saved[0]) }}}, Options{Policy: pol})
	if err != nil || again.Failed != 1 {
		t.Fatalf("the saved trace replays to %+v, %v; want a failure", again, err)
	}
	report, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), `<testsuite name="dshctl replay (policy bug-b)" tests="20"`) {
		t.Errorf("JUnit report:\n%.300s", report)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text.String(), "generated 20 traces from seed 1: ") ||
		!strings.Contains(text.String(), "saved "+g.Saved[0]+"; reproduce: dshctl replay --policy bug-b --no-backend "+g.Saved[0]+"\n") {
		t.Errorf("summary:\n%s", text.String())
	}
	if names, _ := os.ReadDir(dir); len(names) != 2 {
		t.Errorf("temporary files left: %v", names)
	}
}

// TestRunShard: a shard runs its part of the generated traces and says so
// in the report and its summary.
func TestRunShard(t *testing.T) {
	rep, err := Run(context.Background(), nil, Options{Policy: reconcile.Membership, Generate: 10, Seed: 3, Shard: reconcile.Shard{K: 2, N: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Shard != "2/3" || rep.Traces != 3 || rep.Generated.Count != 3 || rep.Generated.Of != 10 {
		t.Fatalf("report %+v, generated %+v", rep, rep.Generated)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if !strings.HasSuffix(text.String(), "3 traces: 3 passed, 0 failed, 0 inconclusive (policy membership, shard 2/3)\n") {
		t.Errorf("summary:\n%s", text.String())
	}
}

// TestConvert: every tab of the captures of a folder becomes a trace file
// that decodes to the same records; a trace named on its own, or a folder
// of traces only, is the caller's misuse.
func TestConvert(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in")
	b, err := os.ReadFile(repo + "/captures/s2-deferral.har")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(src, "s2.har"), string(b))
	writeFile(t, filepath.Join(src, "already.jsonl"), "{\"k\":\"meta\",\"version\":1}\n")
	out := filepath.Join(dir, "out", "new")
	var wrote []Converted
	if err := Convert(out, []string{src}, false, func(c Converted) { wrote = append(wrote, c) }); err != nil {
		t.Fatal(err)
	}
	if len(wrote) == 0 {
		t.Fatal("nothing converted")
	}
	for _, c := range wrote {
		if c.String() != fmt.Sprintf("wrote %s (tab %s of %s, %s)", c.Path, c.Tab, c.Capture, termui.Count(c.Records, "record")) {
			t.Errorf("said %q", c)
		}
		if c.Capture != filepath.Join(src, "s2.har") || filepath.Dir(c.Path) != out || c.Tab == "" {
			t.Errorf("converted %+v", c)
		}
		f, err := os.Open(c.Path)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := reconcile.DecodeTrace(f, c.Tab)
		f.Close()
		if err != nil || len(tr.Records) != c.Records {
			t.Errorf("%s: %v, %d records; want %d", c.Path, err, len(tr.Records), c.Records)
		}
	}

	// Converting again replaces nothing without force, and writes nothing.
	first, err := os.ReadFile(wrote[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(wrote[0].Path, []byte("kept\n"), 0o644)
	var hint termui.HintError
	err = Convert(out, []string{src}, false, func(Converted) { t.Error("wrote over a trace") })
	if !errors.Is(err, fs.ErrExist) || !errors.As(err, &hint) || !strings.Contains(hint.Hint, "--force") {
		t.Fatalf("existing trace: %v", err)
	}
	if b, _ := os.ReadFile(wrote[0].Path); string(b) != "kept\n" {
		t.Fatalf("existing trace replaced: %q", b)
	}
	if err := Convert(out, []string{src}, true, func(Converted) {}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(wrote[0].Path); !bytes.Equal(b, first) {
		t.Fatalf("--force did not replace the trace")
	}

	var arg termui.UsageError
	err = Convert(out, []string{filepath.Join(src, "already.jsonl")}, false, func(Converted) { t.Error("wrote a trace") })
	if !errors.As(err, &arg) || !strings.Contains(err.Error(), "is a JSONL trace already") {
		t.Fatalf("a trace named: %v", err)
	}
	only := filepath.Join(dir, "traces")
	writeFile(t, filepath.Join(only, "t.jsonl"), "{\"k\":\"meta\",\"version\":1}\n")
	if err := Convert(out, []string{only}, false, func(Converted) {}); !errors.As(err, &arg) || err.Error() != "--convert: no capture among "+only {
		t.Fatalf("no capture: %v", err)
	}
}

// TestPolicyNames: the policies offered are the fixed ones, not the bug
// variants, and each is one PolicyByName accepts.
func TestPolicyNames(t *testing.T) {
	names := PolicyNames()
	if !slices.Equal(names, []string{"membership", "legacy"}) {
		t.Errorf("policies %q", names)
	}
	for _, n := range names {
		if _, err := reconcile.PolicyByName(n); err != nil {
			t.Error(err)
		}
	}
}

// TestPrinter: text lists the listed results and ends in the summary;
// JSONL prints every result and no summary; JSON only the document.
func TestPrinter(t *testing.T) {
	pass := reconcile.Result{Name: "p", Policy: "membership", Verdict: reconcile.Pass}
	rep := &Report{Policy: "membership", Traces: 2, Passed: 2, Results: []reconcile.Result{}}
	for format, want := range map[string]string{
		termui.FormatText: "PASS p (policy membership, 0 events, 0 reconciles)\n2 traces: 2 passed, 0 failed, 0 inconclusive (policy membership)\n",
		// Every field is present: null when unknown, [] when empty.
		termui.FormatJSONL: `{"name":"p","source":null,"tab":null,"policy":"membership","verdict":"pass","expect":null,"events":0,"reconciles":0,"violations":[],"warnings":[],"notes":[],"error":null}` + "\n",
		termui.FormatJSON:  "{\n  \"policy\": \"membership\",\n  \"shard\": null,\n  \"traces\": 2,\n  \"passed\": 2,\n  \"failed\": 0,\n  \"inconclusive\": 0,\n  \"errors\": 0,\n  \"generated\": null,\n  \"results\": []\n}\n",
	} {
		var out bytes.Buffer
		p := Printer{Out: termui.Out{Stdout: &out, Format: format}}
		if err := p.Result(pass, true); err != nil {
			t.Fatal(err)
		}
		if err := p.Result(pass, false); err != nil {
			t.Fatal(err)
		}
		if format == termui.FormatJSONL {
			want += want
		}
		if err := p.Summary(rep); err != nil || out.String() != want {
			t.Errorf("%s:\n%s\nwant\n%s", format, out.String(), want)
		}
	}
}

// TestConvertedNames: names that captures of one base name, in two
// folders or in another case, or tabs that SafeName maps alike would share
// are made distinct, the same way for the same arguments.
func TestConvertedNames(t *testing.T) {
	cases := []struct {
		name string
		in   [][2]string // capture, tab
		want []string
	}{
		{"distinct", [][2]string{{"d1/a.har", "t1"}, {"d1/a.har", "t2"}, {"d2/b.har", "t1"}}, []string{"a-t1.jsonl", "a-t2.jsonl", "b-t1.jsonl"}},
		{"same name in two folders", [][2]string{{"d1/s.har", "tabA"}, {"d2/s.har", "tabA"}, {"d2/s.har", "tabB"}},
			[]string{"d1-s-tabA.jsonl", "d2-s-tabA.jsonl", "s-tabB.jsonl"}},
		{"names that differ in case", [][2]string{{"d1/S.har", "t"}, {"d2/s.har", "t"}}, []string{"d1-S-t.jsonl", "d2-s-t.jsonl"}},
		{"same folder name", [][2]string{{"a/x/s.har", "t"}, {"b/x/s.har", "t"}}, []string{"x-s-t.jsonl", "x-s-t-2.jsonl"}},
		{"tabs SafeName maps alike", [][2]string{{"d/s.har", "a/b"}, {"d/s.har", "a_b"}}, []string{"d-s-a_b.jsonl", "d-s-a_b-2.jsonl"}},
		{"a prefixed name taken", [][2]string{{"d1/s.har", "t"}, {"d2/s.har", "t"}, {"e/d1-s.har", "t"}},
			[]string{"d1-s-t.jsonl", "d2-s-t.jsonl", "d1-s-t-2.jsonl"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var outs []converted
			for _, in := range c.in {
				outs = append(outs, converted{name: reconcile.ConvertedName(in[0], in[1]), capture: in[0]})
			}
			convertedNames(outs)
			var got []string
			for _, o := range outs {
				got = append(got, o.name)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("names %q, want %q", got, c.want)
			}
		})
	}
}

// TestConvertCollisions: two captures of one name write two traces, with
// or without force, and a folder's broken trace does not stop its captures
// from being converted.
func TestConvertCollisions(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(repo + "/captures/s2-deferral.har")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"d1", "d2"} {
		writeFile(t, filepath.Join(dir, d, "s.har"), string(b))
	}
	writeFile(t, filepath.Join(dir, "d2", "broken.jsonl"), "{\"k\":\"ws\",\"ev\":{\"type\":\"turn-start\",\"turnId\":7}}\n")
	for _, force := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprint("out-", force))
		var wrote []string
		err := Convert(out, []string{filepath.Join(dir, "d1", "s.har"), filepath.Join(dir, "d2")}, force, func(c Converted) { wrote = append(wrote, c.Path) })
		if err != nil {
			t.Fatalf("force %v: %v", force, err)
		}
		entries, _ := os.ReadDir(out)
		if len(entries) != len(wrote) || len(wrote) != 4 || !slices.Contains(wrote, filepath.Join(out, "d1-s-t1.jsonl")) || !slices.Contains(wrote, filepath.Join(out, "d2-s-t1.jsonl")) {
			t.Errorf("force %v: wrote %q, %d files in %s", force, wrote, len(entries), out)
		}
	}
}

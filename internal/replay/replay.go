// Package replay runs the replay command's suites from files: it finds the
// traces and captures that paths name, replays them and generated traces
// through internal/reconcile, saves shrunk failures, converts captures to
// JSONL traces and writes JUnit reports, every file written whole or not
// at all. reconcile itself does no I/O beyond decoding what it is given;
// this package feeds it.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/durable"
	"github.com/dshctl/dshctl/internal/reconcile"
	"github.com/dshctl/dshctl/internal/termui"
)

// Files lists the named files and the *.jsonl and *.har files of the named
// folders (not their subfolders), as a suite for reconcile.LoadSuite. A
// folder without any is an error with a hint.
func Files(paths []string) ([]reconcile.File, error) {
	var files []reconcile.File
	add := func(p string) {
		files = append(files, reconcile.File{Path: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }})
	}
	for _, a := range paths {
		fi, err := os.Stat(a)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, termui.WithHint(fmt.Errorf("replay: %s: no such trace, capture or folder", a),
				"name trace or capture files, or a folder that holds them")
		}
		if err != nil {
			return nil, fmt.Errorf("replay: %s: %w", a, unwrapPath(err))
		}
		if !fi.IsDir() {
			add(a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("replay: %s: %w", a, unwrapPath(err))
		}
		n := len(files)
		for _, d := range entries {
			name := strings.ToLower(d.Name())
			if d.Type().IsRegular() && (strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".har")) {
				add(filepath.Join(a, d.Name()))
			}
		}
		if len(files) == n {
			return nil, termui.WithHint(fmt.Errorf("replay: no *.jsonl traces or *.har captures in %s", a),
				"name trace or capture files, or a folder that holds them")
		}
	}
	return files, nil
}

// unwrapPath is the cause of a *fs.PathError, whose op and path the
// message names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// PolicyNames are the keep policies users choose between (the historical
// bug variants are accepted too, but not offered).
func PolicyNames() []string {
	var out []string
	for _, p := range reconcile.Policies() {
		if !p.Hidden {
			out = append(out, p.Name)
		}
	}
	return out
}

// Options say what Run runs and what it writes.
type Options struct {
	Policy reconcile.Policy
	// Shard is the part of the recorded and of the generated traces to run.
	Shard reconcile.Shard
	// Generate is how many generated traces to run from Seed (0: none).
	Generate int
	Seed     uint64
	// Save, when set, is the folder each shrunk failing generated trace
	// is written to, with a meta record saying how to reproduce it.
	Save string
	// JUnit, when set, is the file of a JUnit report of every trace run.
	JUnit string
	// KeepResults keeps the results the report lists (every recorded
	// trace's, and the failing generated ones') in Report.Results.
	KeepResults bool
	// Result, when set, is given each result in order as it comes; listed
	// says whether the report lists it. An error stops the run.
	Result func(r reconcile.Result, listed bool) error
	// Progress, when set, is called once with the number of traces to run
	// and returns what to call as each is done.
	Progress func(total int) func()
}

// Report is what a run found; `replay -o json` prints it (MarshalJSON).
type Report struct {
	Policy       string
	Shard        string
	Traces       int
	Passed       int
	Failed       int
	Inconclusive int
	Generated    *Generated
	Results      []reconcile.Result
}

// MarshalJSON writes the report with every field present (null when
// unknown, [] when empty, as every command's JSON), each result as
// ResultJSON.
func (rep *Report) MarshalJSON() ([]byte, error) {
	v := struct {
		Policy       string       `json:"policy"`
		Shard        *string      `json:"shard"`
		Traces       int          `json:"traces"`
		Passed       int          `json:"passed"`
		Failed       int          `json:"failed"`
		Inconclusive int          `json:"inconclusive"`
		Generated    *Generated   `json:"generated"`
		Results      []ResultJSON `json:"results"`
	}{rep.Policy, termui.OrNull(rep.Shard), rep.Traces, rep.Passed, rep.Failed, rep.Inconclusive, rep.Generated,
		make([]ResultJSON, len(rep.Results))}
	for i, r := range rep.Results {
		v.Results[i] = NewResultJSON(r)
	}
	return json.Marshal(v)
}

// ResultJSON is a replay result as JSON: every field present, null when
// unknown (a trace without a tab, say), [] when empty.
type ResultJSON struct {
	Name       string            `json:"name"`
	Source     *string           `json:"source"`
	Tab        *string           `json:"tab"`
	Policy     string            `json:"policy"`
	Verdict    reconcile.Verdict `json:"verdict"`
	Expect     *string           `json:"expect"`
	Events     int               `json:"events"`
	Reconciles int               `json:"reconciles"`
	Violations []violationJSON   `json:"violations"`
	Warnings   []string          `json:"warnings"`
	Notes      []string          `json:"notes"`
}

// violationJSON is a violation with its line and origin null when unknown.
type violationJSON struct {
	reconcile.Violation
	Line   *int    `json:"line"`
	Origin *string `json:"origin"`
}

// NewResultJSON is r as JSON.
func NewResultJSON(r reconcile.Result) ResultJSON {
	v := ResultJSON{Name: r.Name, Source: termui.OrNull(r.Source), Tab: termui.OrNull(r.Tab), Policy: r.Policy, Verdict: r.Verdict,
		Expect: termui.OrNull(r.Expect), Events: r.Events, Reconciles: r.Reconciles, Violations: []violationJSON{},
		Warnings: append([]string{}, r.Warnings...), Notes: append([]string{}, r.Notes...)}
	for _, x := range r.Violations {
		vj := violationJSON{Violation: x, Origin: termui.OrNull(x.Origin)}
		if x.Line > 0 {
			vj.Line = &x.Line
		}
		v.Violations = append(v.Violations, vj)
	}
	return v
}

// Generated counts the generated traces of a run.
type Generated struct {
	Count  int      `json:"count"` // run by this invocation (its shard)
	Of     int      `json:"of"`    // the traces of Options.Generate
	Seed   uint64   `json:"seed"`
	Failed int      `json:"failed"`
	Saved  []string `json:"saved"`
}

// Run loads files as one suite (reconcile.LoadSuite), replays the traces
// of o.Shard under o.Policy, then the generated ones, saving each shrunk
// failure to o.Save, and writes the JUnit report. A failing trace is not
// an error: the report counts it.
func Run(ctx context.Context, files []reconcile.File, o Options) (*Report, error) {
	suite, err := reconcile.LoadSuite(files, o.Shard)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	r := &run{o: o, rep: &Report{Policy: o.Policy.Name, Shard: o.Shard.String(), Results: []reconcile.Result{}}}
	r.step = func() {}
	if o.Progress != nil {
		r.step = o.Progress(len(suite.Traces) + o.Shard.Count(o.Generate))
	}
	err = reconcile.RunTraces(ctx, suite.Traces, o.Policy, 0, func(_ int, res reconcile.Result) error {
		return r.add(res, true)
	})
	if err == nil && o.Generate > 0 {
		err = r.generate(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if o.JUnit != "" {
		name := "dshctl replay (policy " + o.Policy.Name
		if o.Shard.N > 0 {
			name += ", shard " + o.Shard.String()
		}
		err := publishFile(o.JUnit, true, func(w io.Writer) error { return reconcile.WriteJUnit(w, name+")", r.all) })
		if err != nil {
			return nil, fmt.Errorf("replay: --junit: %w", err)
		}
	}
	return r.rep, nil
}

// run is one Run's state: the report, and every result for JUnit.
type run struct {
	o    Options
	rep  *Report
	all  []reconcile.Result
	step func()
}

func (r *run) add(res reconcile.Result, listed bool) error {
	switch res.Verdict {
	case reconcile.Pass:
		r.rep.Passed++
	case reconcile.Fail:
		r.rep.Failed++
	default:
		r.rep.Inconclusive++
	}
	r.rep.Traces++
	if r.o.JUnit != "" {
		r.all = append(r.all, res)
	}
	if listed && r.o.KeepResults {
		r.rep.Results = append(r.rep.Results, res)
	}
	var err error
	if r.o.Result != nil {
		err = r.o.Result(res, listed)
	}
	r.step()
	return err
}

func (r *run) generate(ctx context.Context) error {
	o := r.o
	gen := &Generated{Count: o.Shard.Count(o.Generate), Of: o.Generate, Seed: o.Seed, Saved: []string{}}
	r.rep.Generated = gen
	return reconcile.RunGenerated(ctx, reconcile.GenOptions{Seed: o.Seed, Count: o.Generate, Shard: o.Shard, Policy: o.Policy},
		func(g reconcile.Generated) error {
			if g.Trace != nil {
				gen.Failed++
			}
			if g.Trace != nil && o.Save != "" {
				path, err := saveTrace(o.Save, g.Trace, o.Policy, g.Invariant)
				if err != nil {
					return err
				}
				gen.Saved = append(gen.Saved, path)
			}
			return r.add(g.Result, g.Trace != nil)
		})
}

// Printer prints a run's results as they come and its summary, as
// Out.Format asks: text (a report per listed trace, then the summary),
// FormatJSONL (a line per trace run) or FormatJSON (one document: set
// Options.KeepResults).
type Printer struct{ Out termui.Out }

// Result prints r; it is an Options.Result.
func (p Printer) Result(r reconcile.Result, listed bool) error {
	switch {
	case p.Out.Format == termui.FormatJSONL:
		return p.Out.WriteJSON(p.Out.Stdout, NewResultJSON(r))
	case listed && p.Out.Format != termui.FormatJSON:
		return reconcile.WriteText(p.Out.Stdout, r)
	}
	return nil
}

// Summary prints the end of the run: rep (FormatJSON), its summary (text)
// or nothing (FormatJSONL). Its error is the run's outcome: a
// termui.FindingsError when a trace failed.
func (p Printer) Summary(rep *Report) error {
	var err error
	switch p.Out.Format {
	case termui.FormatJSON:
		err = p.Out.WriteJSON(p.Out.Stdout, rep)
	case termui.FormatJSONL:
	default:
		err = rep.WriteText(p.Out.Stdout)
	}
	switch {
	case err != nil:
		return fmt.Errorf("replay: write report: %w", err)
	case rep.Failed > 0:
		return termui.Findings(fmt.Sprintf("%d of %d traces failed", rep.Failed, rep.Traces))
	}
	return nil
}

// WriteText writes the report's summary for people: the generated traces
// and where the failing ones were saved, then the counts.
func (rep *Report) WriteText(w io.Writer) error {
	if g := rep.Generated; g != nil {
		fmt.Fprintf(w, "generated %s from seed %d: %d failed\n", termui.Count(g.Count, "trace"), g.Seed, g.Failed)
		for _, p := range g.Saved {
			fmt.Fprintf(w, "saved %s; reproduce: dshctl replay --policy %s %s\n", p, rep.Policy, p)
		}
	}
	shard := ""
	if rep.Shard != "" {
		shard = ", shard " + rep.Shard
	}
	_, err := fmt.Fprintf(w, "%s: %d passed, %d failed, %d inconclusive (policy %s%s)\n",
		termui.Count(rep.Traces, "trace"), rep.Passed, rep.Failed, rep.Inconclusive, rep.Policy, shard)
	return err
}

// Converted is a capture's tab that Convert wrote as a trace; -o json and
// -o jsonl print it as {"path", "source", "tab", "records"}.
type Converted struct {
	Path    string `json:"path"`
	Capture string `json:"source"`
	Tab     string `json:"tab"`
	Records int    `json:"records"`
}

// String says what was written, for people.
func (c Converted) String() string {
	return fmt.Sprintf("wrote %s (tab %s of %s, %s)", c.Path, c.Tab, c.Capture, termui.Count(c.Records, "record"))
}

// Convert writes each tab of the captures among paths (files, and the
// *.har captures of folders, whose JSONL traces are not read) as a JSONL
// trace into dir, one file per tab named after the capture and the tab,
// and tells wrote about each. A trace file named on its own, or no capture
// at all, is a termui.UsageError. Every name is chosen before anything is
// written, each distinct (convertedNames); an existing file is replaced
// only with force, otherwise nothing is written.
func Convert(dir string, paths []string, force bool, wrote func(Converted)) error {
	files, err := captureFiles(paths)
	if err != nil {
		return err
	}
	var outs []converted
	for _, f := range files {
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		traces, capture, err := reconcile.DecodeFile(rc, f.Path, nil)
		rc.Close()
		switch {
		case err != nil:
			return fmt.Errorf("replay: %w", err)
		case !capture:
			return termui.Usagef("%s is a JSONL trace already; --convert reads HAR captures", f.Path)
		}
		for _, t := range traces {
			outs = append(outs, converted{name: reconcile.ConvertedName(f.Path, t.Tab), capture: f.Path, trace: t})
		}
	}
	if len(outs) == 0 {
		return termui.Usagef("--convert: no capture among %s", strings.Join(paths, ", "))
	}
	convertedNames(outs)
	// Nothing is written when a trace would replace a file (a committed
	// regression trace, say) unless force.
	for _, o := range outs {
		if _, err := os.Lstat(filepath.Join(dir, o.name)); err == nil && !force {
			return termui.WithHint(fmt.Errorf("replay: --convert: %s: %w", filepath.Join(dir, o.name), fs.ErrExist),
				"use --force to replace it, or convert into another folder")
		}
	}
	if err := durable.MkdirAll(durable.OS, dir, 0o755); err != nil {
		return fmt.Errorf("replay: --convert: %w", err)
	}
	for _, o := range outs {
		path := filepath.Join(dir, o.name)
		if err := publishFile(path, force, o.trace.Encode); err != nil {
			return fmt.Errorf("replay: --convert: %w", err)
		}
		wrote(Converted{Path: path, Capture: o.capture, Tab: o.trace.Tab, Records: len(o.trace.Records)})
	}
	return nil
}

// converted is a trace Convert writes, and the name of its file.
type converted struct {
	name, capture string
	trace         *reconcile.Trace
}

// captureFiles lists the files named and the *.har captures of the folders
// named, each once: a folder's JSONL traces are not read, so a broken one
// does not stop its captures from being converted.
func captureFiles(paths []string) ([]reconcile.File, error) {
	var out []reconcile.File
	seen := map[string]bool{}
	for _, a := range paths {
		files, err := Files([]string{a})
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("replay: %s: %w", a, unwrapPath(err))
		}
		for _, f := range files {
			if fi.IsDir() && !reconcile.IsCaptureName(f.Path) || seen[filepath.Clean(f.Path)] {
				continue
			}
			seen[filepath.Clean(f.Path)] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// convertedNames makes the names of outs distinct, also to a file system
// that ignores case: names that captures of the same base name (in two
// folders) or tabs that SafeName maps alike would share get the capture's
// folder in front, and those still shared a counter (-2, -3, …) in the
// order of outs, so the same arguments always give the same names.
func convertedNames(outs []converted) {
	key := strings.ToLower
	count := map[string]int{}
	for _, o := range outs {
		count[key(o.name)]++
	}
	for i := range outs {
		if count[key(outs[i].name)] > 1 {
			folder := filepath.Dir(outs[i].capture)
			if abs, err := filepath.Abs(folder); err == nil {
				folder = abs
			}
			outs[i].name = reconcile.SafeName(filepath.Base(folder)) + "-" + outs[i].name
		}
	}
	taken := map[string]bool{}
	for i := range outs {
		name := outs[i].name
		for n := 2; taken[key(name)]; n++ {
			name = strings.TrimSuffix(outs[i].name, ".jsonl") + "-" + strconv.Itoa(n) + ".jsonl"
		}
		taken[key(name)] = true
		outs[i].name = name
	}
}

// saveTrace writes a shrunk failing trace to dir, its meta record saying
// what failed and how to reproduce it, and returns its path.
func saveTrace(dir string, t *reconcile.Trace, pol reconcile.Policy, invariant int) (string, error) {
	if err := durable.MkdirAll(durable.OS, dir, 0o755); err != nil {
		return "", fmt.Errorf("--save: %w", err)
	}
	path := filepath.Join(dir, reconcile.SafeName(t.Name)+".jsonl")
	saved := t.Failing(pol, invariant, fmt.Sprintf("dshctl replay --policy %s %s", pol.Name, path))
	if err := publishFile(path, true, saved.Encode); err != nil {
		return "", fmt.Errorf("--save: %w", err)
	}
	return path, nil
}

// publishFile writes path (mode 0644 when new) through a temporary file in
// the same folder, fsynced before it is published, so that path holds the
// whole file or what it held before, even after a crash. Without replace
// a file at path, even one that appears meanwhile, is not replaced
// (fs.ErrExist).
func publishFile(path string, replace bool, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			if rmErr := os.Remove(tmp.Name()); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
				err = errors.Join(err, rmErr)
			}
		}
	}()
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = durable.Publish(tmp.Name(), path, replace); err != nil {
		return err
	}
	// Best effort, as export's: the file's bytes are synced already, and
	// some file systems refuse to sync a folder.
	_ = durable.SyncDir(dir)
	return nil
}

// Package replay runs the replay command's suites from files: it finds the
// traces and captures that paths name, replays them and generated traces
// through internal/reconcile, saves shrunk failures, converts captures to
// JSONL traces and writes JUnit reports, every file written whole or not
// at all. reconcile itself does no I/O beyond decoding what it is given;
// this package feeds it.
package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
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

// stdin is where "-" reads a trace from.
var stdin io.Reader = os.Stdin

// Files lists the named files and the *.jsonl and *.har files of the named
// folders (not their subfolders), as a suite for reconcile.LoadSuite; "-"
// is a JSONL trace on standard input. A folder without any is an error
// with a hint.
func Files(paths []string) ([]reconcile.File, error) {
	var files []reconcile.File
	add := func(p string) {
		files = append(files, reconcile.File{Path: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }})
	}
	for _, a := range paths {
		if a == "-" {
			files = append(files, reconcile.File{Path: "-", Stdin: true, Open: func() (io.ReadCloser, error) { return io.NopCloser(stdin), nil }})
			continue
		}
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

// causeOf is the cause of a file system error without the names it
// carries (a temporary file's, say).
func causeOf(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return unwrapPath(err)
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
	// HTML, when set, is the file of a page showing each failing trace.
	HTML string
	// NoBackend: the backend model answers no chunk request
	// (reconcile.Options.NoBackend).
	NoBackend bool
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
	Errors       int // files that could not be read or decoded
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
		Errors       int          `json:"errors"`
		Generated    *Generated   `json:"generated"`
		Results      []ResultJSON `json:"results"`
	}{rep.Policy, termui.OrNull(rep.Shard), rep.Traces, rep.Passed, rep.Failed, rep.Inconclusive, rep.Errors, rep.Generated,
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
	Error      *string           `json:"error"` // why the file could not be read
}

// violationJSON is a violation: the record as the JSON object it is in the
// trace (null at the end of the trace), its line and origin and the
// message it is about null when unknown, the states with null for ids
// that are not set.
type violationJSON struct {
	Invariant int             `json:"invariant"`
	Name      string          `json:"name"`
	Detail    string          `json:"detail"`
	Index     int             `json:"index"`
	Line      *int            `json:"line"`
	Origin    *string         `json:"origin"`
	At        string          `json:"at"`
	Event     json.RawMessage `json:"event"`
	Message   *string         `json:"message"`
	Fate      *string         `json:"fate"`
	Before    *snapshotJSON   `json:"before"`
	After     *snapshotJSON   `json:"after"`
}

// snapshotJSON is a state of a violation, with what the user saw.
type snapshotJSON struct {
	Chunks             []reconcile.Chunk   `json:"chunks"`
	Live               []reconcile.Message `json:"live"`
	Queue              []reconcile.Queued  `json:"queue"`
	LiveTurnID         *string             `json:"liveTurnId"`
	CurrentAssistantID *string             `json:"currentAssistantId"`
	AgentStatus        string              `json:"agentStatus"`
	Render             []string            `json:"render"`
}

func newSnapshotJSON(s *reconcile.Snapshot) *snapshotJSON {
	if s == nil {
		return nil
	}
	return &snapshotJSON{Chunks: s.C, Live: s.L, Queue: s.Q, LiveTurnID: termui.OrNull(s.LT),
		CurrentAssistantID: termui.OrNull(s.CA), AgentStatus: s.Status, Render: s.View().Render}
}

// NewResultJSON is r as JSON.
func NewResultJSON(r reconcile.Result) ResultJSON {
	v := ResultJSON{Name: r.Name, Source: termui.OrNull(r.Source), Tab: termui.OrNull(r.Tab), Policy: r.Policy, Verdict: r.Verdict,
		Expect: termui.OrNull(r.Expect), Events: r.Events, Reconciles: r.Reconciles, Violations: []violationJSON{},
		Warnings: append([]string{}, r.Warnings...), Notes: append([]string{}, r.Notes...), Error: termui.OrNull(r.Error)}
	for _, x := range r.Violations {
		vj := violationJSON{Invariant: x.Invariant, Name: x.Name, Detail: x.Detail, Index: x.Index,
			Origin: termui.OrNull(x.Origin), At: At(x), Event: json.RawMessage("null"),
			Message: termui.OrNull(x.Message), Fate: termui.OrNull(x.Fate),
			Before: newSnapshotJSON(x.Before), After: newSnapshotJSON(x.After)}
		if x.Line > 0 {
			vj.Line = &x.Line
		}
		if x.Record != nil {
			vj.Event = x.Record.JSON()
		}
		v.Violations = append(v.Violations, vj)
	}
	return v
}

// At says where a violation is, for people: its record (line, or where
// in a capture) or the end of the trace.
func At(v reconcile.Violation) string {
	switch {
	case v.Record == nil:
		return v.Event
	case v.Origin != "":
		return v.Origin
	case v.Line > 0:
		return fmt.Sprintf("record %d (line %d)", v.Index, v.Line)
	}
	return fmt.Sprintf("record %d", v.Index)
}

// Generated counts the generated traces of a run.
type Generated struct {
	Count  int    `json:"count"` // run by this invocation (its shard)
	Of     int    `json:"of"`    // the traces of Options.Generate
	Seed   uint64 `json:"seed"`
	Failed int    `json:"failed"`
	// NeedBackend counts the failures only the backend model's answers
	// show (a failure of invariant 4; replay.md): their saved traces
	// need the model.
	NeedBackend int `json:"needBackend"`
	// Saved lists each distinct shrunk trace written; Duplicates counts
	// the failures that shrank to one saved already.
	Saved      []string `json:"saved"`
	Duplicates int      `json:"duplicates"`
	reproduce  []string // the command that replays each of Saved
}

// Run loads files as one suite (reconcile.LoadSuite), replays the traces
// of o.Shard under o.Policy, then the generated ones, saving each shrunk
// failure to o.Save, and writes the JUnit report and the HTML page. A
// failing trace is not an error: the report counts it; nor is a file that
// cannot be read, a result of its own (verdict error). The paths of the
// files to write are checked first (CheckOutputs).
func Run(ctx context.Context, files []reconcile.File, o Options) (*Report, error) {
	if err := CheckOutputs(o); err != nil {
		return nil, err
	}
	suite, err := reconcile.LoadSuite(files, o.Shard)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	r := &run{o: o, rep: &Report{Policy: o.Policy.Name, Shard: o.Shard.String(), Results: []reconcile.Result{}},
		saved: map[[32]byte]string{}}
	r.step = func() {}
	if o.Progress != nil {
		r.step = o.Progress(len(suite.Traces) + o.Shard.Count(o.Generate))
	}
	opts := reconcile.Options{Policy: o.Policy, NoBackend: o.NoBackend}
	if o.HTML != "" {
		opts.Timeline = timelineRecords
	}
	err = reconcile.RunTraces(ctx, suite.Traces, opts, 0, func(_ int, res reconcile.Result) error {
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
	if o.HTML != "" {
		err := publishFile(o.HTML, true, func(w io.Writer) error { return WriteHTML(w, r.rep, r.failing, o) })
		if err != nil {
			return nil, fmt.Errorf("replay: --html: %w", err)
		}
	}
	return r.rep, nil
}

// timelineRecords is how many records up to a violation the page shows.
const timelineRecords = 200

// CheckOutputs checks, before any work, that the files o writes can be
// written where they are named: --junit and --html name a file (not a
// folder) in a folder that exists, --save a folder or a path where one can
// be made. Errors are usage errors naming the flag.
func CheckOutputs(o Options) error {
	for _, f := range []struct{ flag, path string }{{"--junit", o.JUnit}, {"--html", o.HTML}} {
		if f.path == "" {
			continue
		}
		if fi, err := os.Stat(f.path); err == nil && fi.IsDir() {
			return termui.Usagef("%s %s is a folder: name the file to write", f.flag, f.path)
		}
		dir := filepath.Dir(f.path)
		fi, err := os.Stat(dir)
		switch {
		case err != nil:
			return termui.Usage(fmt.Errorf("%s %s: folder %s: %w", f.flag, f.path, dir, unwrapPath(err)))
		case !fi.IsDir():
			return termui.Usagef("%s %s: %s is not a folder", f.flag, f.path, dir)
		}
	}
	if o.Save != "" {
		// The nearest existing folder on the way must be one.
		for p := filepath.Clean(o.Save); ; p = filepath.Dir(p) {
			fi, err := os.Stat(p)
			if err == nil {
				if !fi.IsDir() {
					return termui.Usagef("--save %s: %s is not a folder", o.Save, p)
				}
				break
			}
			if filepath.Dir(p) == p {
				break
			}
		}
	}
	return nil
}

// run is one Run's state: the report, every result for JUnit, the
// failures for the page and the traces saved, by content.
type run struct {
	o       Options
	rep     *Report
	all     []reconcile.Result
	failing []reconcile.Result
	saved   map[[32]byte]string
	step    func()
}

func (r *run) add(res reconcile.Result, listed bool) error {
	switch res.Verdict {
	case reconcile.Pass:
		r.rep.Passed++
	case reconcile.Fail:
		r.rep.Failed++
	case reconcile.Error:
		r.rep.Errors++
	default:
		r.rep.Inconclusive++
	}
	r.rep.Traces++
	if r.o.JUnit != "" {
		r.all = append(r.all, res)
	}
	if r.o.HTML != "" && (res.Verdict == reconcile.Fail || res.Verdict == reconcile.Error) {
		r.failing = append(r.failing, res)
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
	gopts := reconcile.GenOptions{Seed: o.Seed, Count: o.Generate, Shard: o.Shard, Policy: o.Policy}
	if o.HTML != "" {
		gopts.Timeline = timelineRecords
	}
	return reconcile.RunGenerated(ctx, gopts,
		func(g reconcile.Generated) error {
			if g.Trace != nil {
				gen.Failed++
				if !g.SelfContained {
					gen.NeedBackend++
				}
			}
			if g.Trace != nil && o.Save != "" {
				path, fresh, err := r.save(g)
				if err != nil {
					return err
				}
				if fresh {
					gen.Saved = append(gen.Saved, path)
					gen.reproduce = append(gen.reproduce, reproduceSaved(o.Policy, path, g.SelfContained))
				} else {
					gen.Duplicates++
				}
				g.Result.Notes = append(g.Result.Notes, "saved as "+path)
			}
			return r.add(g.Result, g.Trace != nil)
		})
}

// save writes a generated failure's shrunk trace to o.Save, once per
// distinct trace: fresh is false when a trace with the same records was
// saved already, at path.
func (r *run) save(g reconcile.Generated) (path string, fresh bool, err error) {
	var body bytes.Buffer
	for _, rec := range g.Trace.Records {
		body.Write(rec.JSON())
		body.WriteByte('\n')
	}
	key := sha256.Sum256(body.Bytes())
	if p, ok := r.saved[key]; ok {
		return p, false, nil
	}
	path, err = saveTrace(r.o.Save, g.Trace, r.o.Policy, g.Invariant, g.SelfContained)
	if err != nil {
		return "", false, err
	}
	r.saved[key] = path
	return path, true, nil
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
	case rep.Errors > 0:
		return fmt.Errorf("replay: %s could not be read", termui.Count(rep.Errors, "file"))
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
		for i, p := range g.Saved {
			cmd := "dshctl replay --policy " + rep.Policy + " " + p
			if i < len(g.reproduce) {
				cmd = g.reproduce[i]
			}
			fmt.Fprintf(w, "saved %s; reproduce: %s\n", p, cmd)
		}
		if g.Duplicates > 0 {
			fmt.Fprintf(w, "%d of the failures shrank to a trace saved already\n", g.Duplicates)
		}
	}
	shard := ""
	if rep.Shard != "" {
		shard = ", shard " + rep.Shard
	}
	errs := ""
	if rep.Errors > 0 {
		errs = fmt.Sprintf(", %d could not be read", rep.Errors)
	}
	_, err := fmt.Fprintf(w, "%s: %d passed, %d failed, %d inconclusive%s (policy %s%s)\n",
		termui.Count(rep.Traces, "trace"), rep.Passed, rep.Failed, rep.Inconclusive, errs, rep.Policy, shard)
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
func saveTrace(dir string, t *reconcile.Trace, pol reconcile.Policy, invariant int, selfContained bool) (string, error) {
	if err := durable.MkdirAll(durable.OS, dir, 0o755); err != nil {
		return "", fmt.Errorf("--save: %w", err)
	}
	path := filepath.Join(dir, reconcile.SafeName(t.Name)+".jsonl")
	saved := t.Failing(pol, invariant, reproduceSaved(pol, path, selfContained))
	if !selfContained {
		saved.Meta.Extra["backend"] = "needed: only the backend model's answers to the replay without scroll events show this failure"
	}
	if err := publishFile(path, true, saved.Encode); err != nil {
		return "", fmt.Errorf("--save: %w", err)
	}
	return path, nil
}

// reproduceSaved is the command that replays a saved trace: with the
// backend model off when the trace carries every answer.
func reproduceSaved(pol reconcile.Policy, path string, selfContained bool) string {
	if selfContained {
		return "dshctl replay --policy " + pol.Name + " --no-backend " + path
	}
	return "dshctl replay --policy " + pol.Name + " " + path
}

// publishFile writes path (mode 0644 when new) through a temporary file in
// the same folder, fsynced before it is published, so that path holds the
// whole file or what it held before, even after a crash. Without replace
// a file at path, even one that appears meanwhile, is not replaced
// (fs.ErrExist).
func publishFile(path string, replace bool, write func(io.Writer) error) (err error) {
	defer func() {
		if err != nil {
			// Name the file asked for, never the temporary one.
			err = fmt.Errorf("%s: %w", path, causeOf(err))
		}
	}()
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

// stateLine is a line of --states: the client's view after a record, in
// the projection of the reference client's states (replay.md).
type stateLine struct {
	Trace  string                `json:"trace"`
	I      *int                  `json:"i"` // the record's line in its file, from 0 (the fixtures' "i")
	Origin *string               `json:"origin"`
	K      string                `json:"k"`
	Type   *string               `json:"type"`
	State  *reconcile.ClientView `json:"state"`
}

// finalLine is the last line of a trace in --states: the view at its end,
// before any request still in flight is answered.
type finalLine struct {
	Trace string                `json:"trace"`
	Final *reconcile.ClientView `json:"final"`
}

// States writes, for each trace of files in o.Shard, a JSON line per
// record with the client's view after it under o.Policy (reconcile.View),
// then one with the view at the end. A file that cannot be read is an
// error at its turn (what came before is written).
func States(ctx context.Context, files []reconcile.File, o Options, out termui.Out) error {
	suite, err := reconcile.LoadSuite(files, o.Shard)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	write := func(v any) error { return out.WriteJSON(out.Stdout, v) }
	for _, t := range suite.Traces {
		if t.Err != nil {
			return fmt.Errorf("replay: %w", t.Err)
		}
		final, err := reconcile.States(t, o.Policy, func(i int, rec *reconcile.Record, v reconcile.ClientView) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			l := stateLine{Trace: t.Name, K: rec.Kind, State: &v}
			if rec.Line > 0 {
				n := rec.Line - 1
				l.I = &n
			}
			if i < len(t.Origins) {
				l.Origin = termui.OrNull(t.Origins[i])
			}
			if rec.Kind == reconcile.KindWS && rec.Ev != nil {
				l.Type = &rec.Ev.Type
			}
			return write(l)
		})
		if err == nil {
			err = write(finalLine{Trace: t.Name, Final: &final})
		}
		if err != nil {
			return fmt.Errorf("replay: --states: %w", err)
		}
	}
	return nil
}

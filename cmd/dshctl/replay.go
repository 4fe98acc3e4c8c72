package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/reconcile"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

type replayFlags struct {
	policy   string
	junit    string
	generate int
	seed     uint64
	save     string
	shard    string
	convert  string
}

func newReplayCmd(e *env, g *globals) *cobra.Command {
	var f replayFlags
	var names []string
	for _, p := range reconcile.Policies() {
		if !p.Hidden {
			names = append(names, p.Name)
		}
	}
	cmd := &cobra.Command{
		Use:   "replay [TRACE|CAPTURE|DIR...]",
		Short: "Replay web-client traces and browser captures through the reconcile state machine and check its invariants",
		Long: `Replay recorded WebSocket event traces (JSONL, one record per line) and browser
captures (HAR files saved by DevTools, one trace per tab) through a model of
the web client's queue / interrupt / reconcile path, and check after every
reconcile that no message was lost, none shows twice, a newer turn survives an
older turn's reconcile, and reconciles are idempotent and deferral-safe.
A folder stands for the *.jsonl traces and *.har captures in it. Traces run
in the order of their file paths (a capture's tabs by tab id).

--convert DIR writes each tab of the captures named as a JSONL trace into DIR
(and replays nothing), so a failing capture becomes a committed regression case.

--generate N runs N random traces (a simulated backend, a second client,
dropped sockets, stale views) from --seed, shrinks every failure to a minimal
trace, and writes it to --save so it can be replayed and committed.

--shard K/N runs the K-th of N parts of the suite: the traces whose position
in the path-ordered list of traces and capture tabs is K-1 modulo N, and of
the generated traces those whose index is; N CI runners with the same
arguments run each trace once. Each runner's --junit report stands alone.

Output: a report per trace (text), one JSON document with counts and the
results of the recorded traces and of the failing generated ones (-o json),
or one JSON line per trace run, generated ones included (-o jsonl).

Policies: membership (default), legacy (as shipped). The historical bug
variants are also accepted, to show what the checker catches: bug-a … bug-d
(legacy before fixes A–D) and membership-pre1 … membership-pre8 (membership
before each fix its generated traces called for; see testdata/traces/regress-*).

Exit status: 0 when every trace passes or is inconclusive, 3 when any fails,
1 when a file cannot be read or is not a valid trace or capture, 2 on a
usage error.`,
		Example: `  dshctl replay testdata/traces testdata/captures
  dshctl replay --policy legacy --junit replay.xml testdata/traces
  dshctl replay --convert regressions/ session.har
  dshctl replay --shard 2/4 --junit replay-2.xml testdata/traces
  dshctl replay --generate 10000 --seed 1 --save failures/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := g.outputFormat(formatText, formatText, formatTable, formatJSON, formatJSONL)
			if err != nil {
				return err
			}
			opts, err := replayOptions(cmd, f, args)
			if err != nil {
				return err
			}
			if f.convert != "" {
				return convertCaptures(e, f.convert, args)
			}
			return runReplay(cmd.Context(), e, format, opts, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.policy, "policy", reconcile.Membership.Name, "keep policy under test: "+strings.Join(names, "|"))
	fl.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to `FILE`")
	fl.IntVar(&f.generate, "generate", 0, "run `N` generated traces")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the generated traces")
	fl.StringVar(&f.save, "save", "", "write shrunk failing generated traces to `DIR`")
	fl.StringVar(&f.shard, "shard", "", "run only part `K/N` of the traces and of the generated ones")
	fl.StringVar(&f.convert, "convert", "", "write the tabs of the captures as JSONL traces into `DIR`, and replay nothing")
	return cmd
}

// replayOpts is a checked replay invocation.
type replayOpts struct {
	pol      reconcile.Policy
	shard    reconcile.Shard
	junit    string
	generate int
	seed     uint64
	save     string
}

func replayOptions(cmd *cobra.Command, f replayFlags, args []string) (replayOpts, error) {
	changed := cmd.Flags().Changed
	if f.convert != "" {
		for _, other := range []string{"policy", "junit", "generate", "seed", "save", "shard"} {
			if changed(other) {
				return replayOpts{}, usagef("--convert writes traces and replays nothing: it does not go with --%s", other)
			}
		}
		if len(args) == 0 {
			return replayOpts{}, usagef("--convert needs a capture or a folder of captures")
		}
		return replayOpts{}, nil
	}
	if len(args) == 0 && f.generate == 0 {
		return replayOpts{}, usagef("replay needs a trace, a capture, a folder of them, or --generate N")
	}
	if f.generate < 0 {
		return replayOpts{}, usagef("--generate must be positive")
	}
	if f.generate == 0 && (changed("seed") || f.save != "") {
		return replayOpts{}, usagef("--seed and --save go with --generate")
	}
	pol, err := reconcile.PolicyByName(f.policy)
	if err != nil {
		return replayOpts{}, usageError{err}
	}
	o := replayOpts{pol: pol, junit: f.junit, generate: f.generate, seed: f.seed, save: f.save}
	if f.shard != "" {
		if o.shard, err = reconcile.ParseShard(f.shard); err != nil {
			return replayOpts{}, usageError{fmt.Errorf("--shard: %w", err)}
		}
	}
	return o, nil
}

// replayJSON is the JSON shape of replay's output.
type replayJSON struct {
	Policy       string             `json:"policy"`
	Shard        string             `json:"shard,omitempty"`
	Traces       int                `json:"traces"`
	Passed       int                `json:"passed"`
	Failed       int                `json:"failed"`
	Inconclusive int                `json:"inconclusive"`
	Generated    *generatedJSON     `json:"generated,omitempty"`
	Results      []reconcile.Result `json:"results"`
}

type generatedJSON struct {
	Count  int      `json:"count"` // run by this invocation (its shard)
	Of     int      `json:"of"`    // the traces of --generate
	Seed   uint64   `json:"seed"`
	Failed int      `json:"failed"`
	Saved  []string `json:"saved,omitempty"`
}

// replayReport prints results as they come, in the chosen format, and
// keeps what the summary, the JSON document and the JUnit report need.
type replayReport struct {
	w      io.Writer
	format string
	out    replayJSON
	all    []reconcile.Result // for JUnit
	junit  bool
	err    error
}

func (r *replayReport) add(res reconcile.Result, listed bool) {
	switch res.Verdict {
	case reconcile.Pass:
		r.out.Passed++
	case reconcile.Fail:
		r.out.Failed++
	default:
		r.out.Inconclusive++
	}
	r.out.Traces++
	if r.junit {
		r.all = append(r.all, res)
	}
	switch {
	case r.err != nil:
	case r.format == formatJSONL:
		r.err = writeJSON(r.w, formatJSONL, res)
	case !listed:
	case r.format == formatJSON:
		r.out.Results = append(r.out.Results, res)
	default:
		r.err = reconcile.WriteText(r.w, res)
	}
}

func runReplay(ctx context.Context, e *env, format string, o replayOpts, args []string) error {
	files, err := suiteFiles(args)
	if err != nil {
		return err
	}
	suite, err := reconcile.LoadSuite(files, o.shard)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	rep := &replayReport{w: e.stdout, format: format, junit: o.junit != "",
		out: replayJSON{Policy: o.pol.Name, Shard: o.shard.String(), Results: []reconcile.Result{}}}
	bar := newProgress(e, format, "replay", len(suite.Traces)+o.shard.Count(o.generate))
	defer bar.Finish()
	err = reconcile.RunTraces(ctx, suite.Traces, o.pol, 0, func(_ int, res reconcile.Result) error {
		rep.add(res, true)
		bar.Add(1)
		return rep.err
	})
	if err == nil && o.generate > 0 {
		if e.getenv("GOGC") == "" {
			// Each generated trace is a burst of short-lived allocations
			// and the run keeps almost nothing: a larger GC target costs
			// about 20 MB and saves about 40% of the CPU.
			defer debug.SetGCPercent(debug.SetGCPercent(400))
		}
		gen := &generatedJSON{Count: o.shard.Count(o.generate), Of: o.generate, Seed: o.seed}
		rep.out.Generated = gen
		err = reconcile.RunGenerated(ctx, reconcile.GenOptions{Seed: o.seed, Count: o.generate, Shard: o.shard, Policy: o.pol},
			func(g reconcile.Generated) error {
				if g.Trace != nil {
					gen.Failed++
				}
				if g.Trace != nil && o.save != "" {
					path, err := saveTrace(o.save, g.Trace, o.pol, g.Invariant)
					if err != nil {
						return err
					}
					gen.Saved = append(gen.Saved, path)
				}
				rep.add(g.Result, g.Trace != nil)
				bar.Add(1)
				return rep.err
			})
	}
	bar.Finish()
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if o.junit != "" {
		suiteName := "dshctl replay (policy " + o.pol.Name
		if o.shard.N > 0 {
			suiteName += ", shard " + o.shard.String()
		}
		if err := writeJUnitFile(o.junit, suiteName+")", rep.all); err != nil {
			return err
		}
	}
	if err := printReplaySummary(e.stdout, format, rep.out); err != nil {
		return fmt.Errorf("replay: write report: %w", err)
	}
	if rep.out.Failed > 0 {
		return findingsError{fmt.Sprintf("%d of %d traces failed", rep.out.Failed, rep.out.Traces)}
	}
	return nil
}

func printReplaySummary(w io.Writer, format string, out replayJSON) error {
	switch format {
	case formatJSON:
		return writeJSON(w, format, out)
	case formatJSONL:
		return nil
	}
	if g := out.Generated; g != nil {
		fmt.Fprintf(w, "generated %s from seed %d: %d failed\n", termui.Count(g.Count, "trace"), g.Seed, g.Failed)
		for _, p := range g.Saved {
			fmt.Fprintf(w, "saved %s; reproduce: dshctl replay --policy %s %s\n", p, out.Policy, p)
		}
	}
	shard := ""
	if out.Shard != "" {
		shard = ", shard " + out.Shard
	}
	_, err := fmt.Fprintf(w, "%s: %d passed, %d failed, %d inconclusive (policy %s%s)\n", termui.Count(out.Traces, "trace"), out.Passed, out.Failed, out.Inconclusive, out.Policy, shard)
	return err
}

// suiteFiles lists the named files and the *.jsonl and *.har files of the
// named folders.
func suiteFiles(args []string) ([]reconcile.File, error) {
	var files []reconcile.File
	add := func(p string) {
		files = append(files, reconcile.File{Path: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }})
	}
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		if !fi.IsDir() {
			add(a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		n := len(files)
		for _, d := range entries {
			name := strings.ToLower(d.Name())
			if d.Type().IsRegular() && (strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".har")) {
				add(filepath.Join(a, d.Name()))
			}
		}
		if len(files) == n {
			return nil, withHint(fmt.Errorf("replay: no *.jsonl traces or *.har captures in %s", a), "name trace or capture files, or a folder that holds them")
		}
	}
	return files, nil
}

// convertCaptures writes the tabs of the captures among args as JSONL traces
// into dir, one file per tab named after the capture and the tab.
func convertCaptures(e *env, dir string, args []string) error {
	files, err := suiteFiles(args)
	if err != nil {
		return err
	}
	n := 0
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
		case !capture && slices.Contains(args, f.Path):
			return usagef("%s is a JSONL trace already; --convert reads HAR captures", f.Path)
		case !capture:
			continue // a folder's trace: JSONL already
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("replay: --convert: %w", err)
		}
		for _, t := range traces {
			path := filepath.Join(dir, reconcile.ConvertedName(f.Path, t.Tab))
			if err := writeFileAtomic(path, t.Encode); err != nil {
				return fmt.Errorf("replay: --convert: %w", err)
			}
			n++
			fmt.Fprintf(e.stdout, "wrote %s (tab %s of %s, %s)\n", path, t.Tab, f.Path, termui.Count(len(t.Records), "record"))
		}
	}
	if n == 0 {
		return usagef("--convert: no capture among %s", strings.Join(args, ", "))
	}
	return nil
}

// saveTrace writes a shrunk failing trace to dir, its meta record saying
// what failed and how to reproduce it, and returns its path.
func saveTrace(dir string, t *reconcile.Trace, pol reconcile.Policy, invariant int) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--save: %w", err)
	}
	path := filepath.Join(dir, reconcile.SafeName(t.Name)+".jsonl")
	saved := t.Failing(pol, invariant, fmt.Sprintf("dshctl replay --policy %s %s", pol.Name, path))
	if err := writeFileAtomic(path, saved.Encode); err != nil {
		return "", fmt.Errorf("--save: %w", err)
	}
	return path, nil
}

func writeJUnitFile(path, suite string, results []reconcile.Result) error {
	err := writeFileAtomic(path, func(w io.Writer) error { return reconcile.WriteJUnit(w, suite, results) })
	if err != nil {
		return fmt.Errorf("replay: --junit: %w", err)
	}
	return nil
}

// writeFileAtomic writes path through a temporary file in the same folder,
// so a reader never sees half a report.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
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
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

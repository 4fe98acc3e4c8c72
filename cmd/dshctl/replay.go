package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/reconcile"
	"github.com/spf13/cobra"
)

type replayFlags struct {
	policy   string
	junit    string
	generate int
	seed     uint64
	save     string
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
		Use:   "replay [TRACE|DIR...]",
		Short: "Replay web-client event traces through the reconcile state machine and check its invariants",
		Long: `Replay recorded WebSocket event traces (JSONL, one record per line) through a model of
the web client's queue / interrupt / reconcile path, and check after every
reconcile that no message was lost, none shows twice, a newer turn survives an
older turn's reconcile, and reconciles are idempotent and deferral-safe.
A folder stands for the *.jsonl traces in it.

--generate N runs N random traces (a simulated backend and a second client)
from --seed, shrinks every failure to a minimal trace, and writes it to --save
so it can be replayed and committed as a regression case.

Policies: membership (default), legacy (as shipped). The historical bug
variants are also accepted, to show what the checker catches: bug-a … bug-d
(legacy before fixes A–D) and membership-pre1 … membership-pre6 (membership
before each fix its generated traces called for; see testdata/traces/regress-*).

Exit status: 0 when every trace passes or is inconclusive, 3 when any fails,
1 when a trace cannot be read or is malformed, 2 on a usage error.`,
		Example: `  dshctl replay testdata/traces
  dshctl replay --policy legacy --junit replay.xml testdata/traces
  dshctl replay --generate 10000 --seed 1 --save failures/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := g.outputFormat(formatText, formatText, formatTable, formatJSON, formatJSONL)
			if err != nil {
				return err
			}
			if len(args) == 0 && f.generate == 0 {
				return usagef("replay needs a trace, a folder of traces, or --generate N")
			}
			if f.generate < 0 {
				return usagef("--generate must be positive")
			}
			if f.generate == 0 && (cmd.Flags().Changed("seed") || f.save != "") {
				return usagef("--seed and --save go with --generate")
			}
			pol, err := reconcile.PolicyByName(f.policy)
			if err != nil {
				return usageError{err}
			}
			return runReplay(e, format, pol, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.policy, "policy", reconcile.Membership.Name, "keep policy under test: "+strings.Join(names, "|"))
	fl.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to `FILE`")
	fl.IntVar(&f.generate, "generate", 0, "run `N` generated traces")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the generated traces")
	fl.StringVar(&f.save, "save", "", "write shrunk failing generated traces to `DIR`")
	return cmd
}

// replayJSON is the JSON shape of replay's output.
type replayJSON struct {
	Policy       string             `json:"policy"`
	Traces       int                `json:"traces"`
	Passed       int                `json:"passed"`
	Failed       int                `json:"failed"`
	Inconclusive int                `json:"inconclusive"`
	Generated    *generatedJSON     `json:"generated,omitempty"`
	Results      []reconcile.Result `json:"results"`
}

type generatedJSON struct {
	Count int      `json:"count"`
	Seed  uint64   `json:"seed"`
	Saved []string `json:"saved,omitempty"`
}

func runReplay(e *env, format string, pol reconcile.Policy, f replayFlags, args []string) error {
	traces, err := loadTraces(args)
	if err != nil {
		return err
	}
	out := replayJSON{Policy: pol.Name, Results: []reconcile.Result{}}
	bar := newProgress(e, format, "replay", len(traces)+f.generate)
	defer bar.finish()
	var all []reconcile.Result // every result, for the JUnit report
	for _, t := range traces {
		res := reconcile.Run(t, reconcile.Options{Policy: pol})
		all = append(all, res)
		out.Results = append(out.Results, res)
		bar.add(1)
	}
	if f.generate > 0 {
		out.Generated = &generatedJSON{Count: f.generate, Seed: f.seed}
		for i := range f.generate {
			t := reconcile.Generate(f.seed, i, pol)
			res := reconcile.Run(t, reconcile.Options{Policy: pol})
			if v := res.First(); v != nil {
				small := reconcile.ShrinkFailure(t, pol, v.Invariant)
				res = reconcile.Run(small, reconcile.Options{Policy: pol})
				if f.save != "" {
					path, err := saveTrace(f.save, small, pol, v.Invariant)
					if err != nil {
						return err
					}
					out.Generated.Saved = append(out.Generated.Saved, path)
				}
				out.Results = append(out.Results, res)
			}
			all = append(all, res)
			bar.add(1)
		}
	}
	bar.finish()
	for _, r := range all {
		switch r.Verdict {
		case reconcile.Pass:
			out.Passed++
		case reconcile.Fail:
			out.Failed++
		default:
			out.Inconclusive++
		}
	}
	out.Traces = len(all)
	if f.junit != "" {
		if err := writeJUnitFile(f.junit, all); err != nil {
			return err
		}
	}
	if err := printReplay(e.stdout, format, out); err != nil {
		return fmt.Errorf("replay: write report: %w", err)
	}
	if out.Failed > 0 {
		return findingsError{fmt.Sprintf("%d of %d traces failed", out.Failed, out.Traces)}
	}
	return nil
}

func printReplay(w io.Writer, format string, out replayJSON) error {
	switch format {
	case formatJSON, formatJSONL:
		return writeJSON(w, format, out)
	}
	for _, r := range out.Results {
		if err := reconcile.WriteText(w, r); err != nil {
			return err
		}
	}
	if g := out.Generated; g != nil {
		fmt.Fprintf(w, "generated %s from seed %d: %d failed\n", count(g.Count, "trace"), g.Seed, len(out.Results)-(out.Traces-g.Count))
		for _, p := range g.Saved {
			fmt.Fprintf(w, "saved %s; reproduce: dshctl replay --policy %s %s\n", p, out.Policy, p)
		}
	}
	_, err := fmt.Fprintf(w, "%s: %d passed, %d failed, %d inconclusive (policy %s)\n", count(out.Traces, "trace"), out.Passed, out.Failed, out.Inconclusive, out.Policy)
	return err
}

// loadTraces decodes the named trace files and the *.jsonl files of the
// named folders, in argument order, each folder sorted by name.
func loadTraces(args []string) ([]*reconcile.Trace, error) {
	var paths []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		if !fi.IsDir() {
			paths = append(paths, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		var found []string
		for _, d := range entries {
			if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".jsonl") {
				found = append(found, filepath.Join(a, d.Name()))
			}
		}
		if len(found) == 0 {
			return nil, withHint(fmt.Errorf("replay: no *.jsonl traces in %s", a), "name trace files, or a folder that holds *.jsonl traces")
		}
		slices.Sort(found)
		paths = append(paths, found...)
	}
	traces := make([]*reconcile.Trace, 0, len(paths))
	for _, p := range paths {
		t, err := decodeTraceFile(p)
		if err != nil {
			return nil, err
		}
		traces = append(traces, t)
	}
	return traces, nil
}

func decodeTraceFile(path string) (*reconcile.Trace, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer fh.Close()
	t, err := reconcile.DecodeTrace(fh, strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	return t, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// saveTrace writes a shrunk failing trace to dir, its meta record saying
// what failed and how to reproduce it, and returns its path.
func saveTrace(dir string, t *reconcile.Trace, pol reconcile.Policy, invariant int) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("replay: --save: %w", err)
	}
	path := filepath.Join(dir, unsafeName.ReplaceAllString(t.Name, "_")+".jsonl")
	meta := *t.Meta
	meta.Extra = map[string]string{}
	for k, v := range t.Meta.Extra {
		meta.Extra[k] = v
	}
	meta.Extra["foundWith"] = pol.Name
	meta.Extra["invariant"] = fmt.Sprintf("%d (%s)", invariant, reconcile.InvariantName(invariant))
	meta.Extra["reproduce"] = fmt.Sprintf("dshctl replay --policy %s %s", pol.Name, path)
	saved := *t
	saved.Meta = &meta
	if err := writeFileAtomic(path, saved.Encode); err != nil {
		return "", fmt.Errorf("replay: --save: %w", err)
	}
	return path, nil
}

func writeJUnitFile(path string, results []reconcile.Result) error {
	err := writeFileAtomic(path, func(w io.Writer) error { return reconcile.WriteJUnit(w, "dshctl replay", results) })
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

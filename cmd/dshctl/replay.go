package main

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/dshctl/dshctl/internal/reconcile"
	"github.com/dshctl/dshctl/internal/replay"
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
			o, err := replayOptions(cmd, f, args)
			if err != nil {
				return err
			}
			if f.convert != "" {
				return explainReplay(replay.Convert(f.convert, args, func(c replay.Converted) {
					fmt.Fprintf(e.stdout, "wrote %s (tab %s of %s, %s)\n", c.Path, c.Tab, c.Capture, termui.Count(c.Records, "record"))
				}))
			}
			return runReplay(cmd, e, format, o, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.policy, "policy", reconcile.Membership.Name, "keep policy under test: "+strings.Join(replay.PolicyNames(), "|"))
	fl.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to `FILE`")
	fl.IntVar(&f.generate, "generate", 0, "run `N` generated traces")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the generated traces")
	fl.StringVar(&f.save, "save", "", "write shrunk failing generated traces to `DIR`")
	fl.StringVar(&f.shard, "shard", "", "run only part `K/N` of the traces and of the generated ones")
	fl.StringVar(&f.convert, "convert", "", "write the tabs of the captures as JSONL traces into `DIR`, and replay nothing")
	return cmd
}

func replayOptions(cmd *cobra.Command, f replayFlags, args []string) (replay.Options, error) {
	changed := cmd.Flags().Changed
	if f.convert != "" {
		for _, other := range []string{"policy", "junit", "generate", "seed", "save", "shard"} {
			if changed(other) {
				return replay.Options{}, termui.Usagef("--convert writes traces and replays nothing: it does not go with --%s", other)
			}
		}
		if len(args) == 0 {
			return replay.Options{}, termui.Usagef("--convert needs a capture or a folder of captures")
		}
		return replay.Options{}, nil
	}
	if len(args) == 0 && f.generate == 0 {
		return replay.Options{}, termui.Usagef("replay needs a trace, a capture, a folder of them, or --generate N")
	}
	if f.generate < 0 {
		return replay.Options{}, termui.Usagef("--generate must be positive")
	}
	if f.generate == 0 && (changed("seed") || f.save != "") {
		return replay.Options{}, termui.Usagef("--seed and --save go with --generate")
	}
	pol, err := reconcile.PolicyByName(f.policy)
	if err != nil {
		return replay.Options{}, termui.Usage(err)
	}
	o := replay.Options{Policy: pol, JUnit: f.junit, Generate: f.generate, Seed: f.seed, Save: f.save}
	if f.shard != "" {
		if o.Shard, err = reconcile.ParseShard(f.shard); err != nil {
			return replay.Options{}, termui.Usage(fmt.Errorf("--shard: %w", err))
		}
	}
	return o, nil
}

// runReplay runs the suite (replay.Run), printing each result as it comes
// in text or -o jsonl, then the summary or -o json's document.
func runReplay(cmd *cobra.Command, e *env, format string, o replay.Options, args []string) error {
	files, err := replay.Files(args)
	if err != nil {
		return explainReplay(err)
	}
	if o.Generate > 0 && e.getenv("GOGC") == "" {
		// Each generated trace is a burst of short-lived allocations and
		// the run keeps almost nothing: a larger GC target costs about
		// 20 MB and saves about 40% of the CPU.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	var bar *termui.Progress
	o.Progress = func(n int) func() { bar = newProgress(e, format, "replay", n); return func() { bar.Add(1) } }
	o.KeepResults = format == formatJSON
	o.Result = func(res reconcile.Result, listed bool) error {
		switch {
		case format == formatJSONL:
			return writeJSON(e.stdout, format, res)
		case listed && format != formatJSON:
			return reconcile.WriteText(e.stdout, res)
		}
		return nil
	}
	rep, err := replay.Run(cmd.Context(), files, o)
	bar.Finish()
	if err != nil {
		return err
	}
	switch format {
	case formatJSON:
		err = writeJSON(e.stdout, format, rep)
	case formatText, formatTable:
		err = rep.WriteText(e.stdout)
	}
	if err != nil {
		return fmt.Errorf("replay: write report: %w", err)
	}
	if rep.Failed > 0 {
		return termui.Findings(fmt.Sprintf("%d of %d traces failed", rep.Failed, rep.Traces))
	}
	return nil
}

// explainReplay words the errors of finding traces: a folder without any,
// and arguments that are no captures.
func explainReplay(err error) error {
	switch {
	case errors.As(err, new(*replay.NoTracesError)):
		return termui.WithHint(err, "name trace or capture files, or a folder that holds them")
	case errors.As(err, new(*replay.ArgError)):
		return termui.Usage(err)
	}
	return err
}

package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/dshctl/dshctl/internal/reconcile"
	"github.com/dshctl/dshctl/internal/replay"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

func newReplayCmd(e *env, g *globals) *cobra.Command {
	var o replay.Options
	var policy, shard, convert string
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
			if convert != "" {
				if other := changedFlags(cmd, "policy", "junit", "generate", "seed", "save", "shard"); len(other) > 0 {
					return termui.Usagef("--convert writes traces and replays nothing: it does not go with %s", other[0])
				}
				if len(args) == 0 {
					return termui.Usagef("--convert needs a capture or a folder of captures")
				}
				return replay.Convert(convert, args, func(c replay.Converted) { fmt.Fprintln(e.stdout, c) })
			}
			switch {
			case len(args) == 0 && o.Generate == 0:
				return termui.Usagef("replay needs a trace, a capture, a folder of them, or --generate N")
			case o.Generate < 0:
				return termui.Usagef("--generate must be positive")
			case o.Generate == 0 && (cmd.Flags().Changed("seed") || o.Save != ""):
				return termui.Usagef("--seed and --save go with --generate")
			}
			if o.Policy, err = reconcile.PolicyByName(policy); err != nil {
				return termui.Usage(err)
			}
			if shard != "" {
				if o.Shard, err = reconcile.ParseShard(shard); err != nil {
					return termui.Usage(fmt.Errorf("--shard: %w", err))
				}
			}
			return runReplay(cmd.Context(), e, format, o, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&policy, "policy", reconcile.Membership.Name, "keep policy under test: "+strings.Join(replay.PolicyNames(), "|"))
	fl.StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	fl.IntVar(&o.Generate, "generate", 0, "run `N` generated traces")
	fl.Uint64Var(&o.Seed, "seed", 1, "seed of the generated traces")
	fl.StringVar(&o.Save, "save", "", "write shrunk failing generated traces to `DIR`")
	fl.StringVar(&shard, "shard", "", "run only part `K/N` of the traces and of the generated ones")
	fl.StringVar(&convert, "convert", "", "write the tabs of the captures as JSONL traces into `DIR`, and replay nothing")
	return cmd
}

// runReplay runs the suite (replay.Run), printing each result as it comes,
// then the summary or -o json's document.
func runReplay(ctx context.Context, e *env, format string, o replay.Options, args []string) error {
	files, err := replay.Files(args)
	if err != nil {
		return err
	}
	if o.Generate > 0 && e.getenv("GOGC") == "" {
		// Each generated trace is a burst of short-lived allocations and
		// the run keeps almost nothing: a larger GC target costs about
		// 20 MB and saves about 40% of the CPU.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	p := replay.Printer{Out: e.out(format)}
	bar := p.Out.NewBar("replay")
	o.Progress, o.Result, o.KeepResults = bar.Start, p.Result, format == formatJSON
	rep, err := replay.Run(ctx, files, o)
	bar.Finish()
	if err != nil {
		return err
	}
	if err := p.Summary(rep); err != nil {
		return fmt.Errorf("replay: write report: %w", err)
	}
	if rep.Failed > 0 {
		return termui.Findings(fmt.Sprintf("%d of %d traces failed", rep.Failed, rep.Traces))
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/dshctl/dshctl/internal/reconcile"
	"github.com/dshctl/dshctl/internal/replay"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

func newReplayCmd(e *env, g *globals) *cobra.Command {
	var o replay.Options
	var policy, shard, convert string
	var force, states bool
	var out *output
	cmd := &cobra.Command{
		Use:   "replay [TRACE|CAPTURE|DIR|-...]",
		Short: "Replay web-client traces and browser captures through the reconcile state machine and check its invariants",
		Long:  help("replay"),
		Example: `  dshctl replay traces/ captures/
  dshctl replay --policy legacy --junit replay.xml traces/
  dshctl replay --convert regressions/ session.har
  dshctl replay --shard 2/4 --junit replay-2.xml traces/
  dshctl replay --generate 10000 --seed 1 --save failures/
  dshctl replay --policy legacy --html replay.html traces/
  dshctl replay --states --policy legacy trace.jsonl | jq -c .state.render`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format := out.format
			var err error
			if states {
				if other := changedFlags(cmd, "junit", "generate", "seed", "save", "convert", "html", "no-backend"); len(other) > 0 {
					return termui.Usagef("--states prints the client's states and checks nothing: it does not go with %s", other[0])
				}
			}
			if force && convert == "" {
				return termui.Usagef("--force goes with --convert")
			}
			if convert != "" {
				if other := changedFlags(cmd, "policy", "junit", "generate", "seed", "save", "shard", "html", "no-backend"); len(other) > 0 {
					return termui.Usagef("--convert writes traces and replays nothing: it does not go with %s", other[0])
				}
				if len(args) == 0 {
					return termui.Usagef("--convert needs a capture or a folder of captures")
				}
				return convertCaptures(e, format, convert, args, force)
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
				return err // replayPolicies holds the names it knows: a build mistake
			}
			if shard != "" {
				if o.Shard, err = reconcile.ParseShard(shard); err != nil {
					return termui.Usage(fmt.Errorf("--shard: %w", err))
				}
			}
			if states {
				if len(args) == 0 {
					return termui.Usagef("--states needs a trace, a capture or a folder of them")
				}
				files, err := replay.Files(args)
				if err != nil {
					return err
				}
				return replay.States(cmd.Context(), files, o, e.out(termui.FormatJSONL))
			}
			if err := replay.CheckOutputs(o); err != nil {
				return err
			}
			return runReplay(cmd.Context(), e, format, o, args)
		},
	}
	out = addOutput(cmd, e, textFormats...)
	fl := cmd.Flags()
	enumFlag(cmd, &policy, "policy", "", reconcile.Membership.Name, replayPolicies(), "keep policy under test")
	fl.StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	fl.IntVar(&o.Generate, "generate", 0, "run `N` generated traces")
	fl.Uint64Var(&o.Seed, "seed", 1, "seed of the generated traces")
	fl.StringVar(&o.Save, "save", "", "write each distinct shrunk failing generated trace, with every answer it needs, to `DIR`")
	fl.StringVar(&o.HTML, "html", "", "also write a page showing each failing trace to `FILE` (self-contained)")
	fl.BoolVar(&o.NoBackend, "no-backend", false, "answer chunk requests only from the trace's fetch records, never from the backend model")
	fl.BoolVar(&states, "states", false, "print the client's state after every record as JSON lines (the reference client's projection), and check nothing")
	fl.StringVar(&shard, "shard", "", "run only part `K/N` of the traces and of the generated ones")
	fl.StringVar(&convert, "convert", "", "write the tabs of the captures as JSONL traces into `DIR`, and replay nothing")
	fl.BoolVar(&force, "force", false, "with --convert: replace existing trace files")
	return cmd
}

// replayPolicies are replay's --policy values: those users choose between,
// and the historical bug variants, accepted but not offered.
func replayPolicies() enum {
	en := oneOf(replay.PolicyNames()...)
	en.also = map[string]string{}
	for _, p := range reconcile.Policies() {
		if p.Hidden {
			en.also[p.Name] = p.Name
		}
	}
	return en
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
	o.Progress, o.Result, o.KeepResults = bar.Start, p.Result, format == termui.FormatJSON
	rep, err := replay.Run(ctx, files, o)
	bar.Finish()
	if err != nil {
		return err
	}
	return p.Summary(rep)
}

// convertCaptures runs --convert: a line per trace written, or per -o
// jsonl a JSON line, or per -o json one array of them all.
func convertCaptures(e *env, format, dir string, args []string, force bool) error {
	out := e.out(format)
	var all []replay.Converted
	var werr error
	err := replay.Convert(dir, args, force, func(c replay.Converted) {
		switch {
		case werr != nil:
		case format == termui.FormatJSON:
			all = append(all, c)
		case format == termui.FormatJSONL:
			werr = out.WriteJSON(e.stdout, c)
		default:
			_, werr = fmt.Fprintln(e.stdout, c)
		}
	})
	if err == nil && format == termui.FormatJSON {
		werr = out.WriteJSON(e.stdout, append([]replay.Converted{}, all...))
	}
	if err == nil && werr != nil {
		err = fmt.Errorf("replay: --convert: %w", werr)
	}
	return err
}

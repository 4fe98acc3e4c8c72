package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

// listGCPercent is list's GC target (see runList).
const listGCPercent = 25

func newListCmd(e *env, g *globals) *cobra.Command {
	var sel inspect.Selection
	var strict bool
	var budget int64
	var out *output
	var times timeFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sessions of the store, newest activity first",
		Long:  help("list"),
		Example: `  dshctl list
  dshctl list --all --sort size --limit 20
  dshctl list --project ~/src/app -o json
  dshctl list --since yesterday --state open,error
  dshctl list | cut -f1                       # full ids
  dshctl list -o json | jq -r 'sort_by(.updatedAt)[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if sel.Limit < 0 {
				return termui.Usagef("--limit must not be negative")
			}
			if budget <= 0 {
				return termui.Usagef("--scan-budget must be positive")
			}
			if sel.Project != "" {
				if sel.Project, err = filepath.Abs(sel.Project); err != nil {
					return termui.Usage(err)
				}
			}
			if sel.Active, err = times.parse(e); err != nil {
				return err
			}
			return runList(cmd.Context(), e, g, out.format, sel, strict, budget)
		},
	}
	out = addOutput(cmd, e, tableFormats...)
	f := cmd.Flags()
	f.BoolVarP(&sel.All, "all", "a", false, "include blank sessions (hidden by default, like the web UI)")
	f.StringVar(&sel.Project, "project", "", "only sessions whose cwd is `DIR`")
	enumListFlag(cmd, &sel.States, "state", oneOf(inspect.States...), "only sessions in this state, repeatable or a comma list (blank shows blank sessions)")
	times.add(f, "sessions updated (the UPDATED column)", "sessions created")
	f.IntVarP(&sel.Limit, "limit", "n", 0, "print at most `N` sessions (0: all)")
	enumFlag(cmd, &sel.Sort, "sort", "", "updated", oneOf(inspect.SortKeys...), "order, newest or largest first")
	f.BoolVar(&strict, "strict", false, "exit 1 when any session cannot be read")
	bytesFlag(f, &budget, "scan-budget", inspect.DefaultScanBudget, fmt.Sprintf("bytes read per session and direction (and %d times as many decoded) to prove blankness and find the last prompt", seam.ScanDecodedFactor))
	return cmd
}

// runList lists the store, keeping what the flags select
// (inspect.ListSelect), and prints it; piped or as JSON, sorted by
// creation, it prints each row as soon as it is known (inspect.ListStream).
func runList(ctx context.Context, e *env, g *globals, format string, o inspect.Selection, strict bool, budget int64) error {
	svc, err := g.openStore(e, store.Options{AllowUnknownTypes: true})
	if err != nil {
		return err
	}
	defer svc.Close()
	if e.getenv("GOGC") == "" {
		// Reading the logs makes far more garbage than list keeps (every
		// row it shows until it can sort them, or the first rows only
		// with --limit; or a sort key per session when it streams): a
		// lower GC target holds the peak heap near what it keeps, not
		// twice that.
		defer debug.SetGCPercent(debug.SetGCPercent(listGCPercent))
	}
	out := e.out(format)
	lo := inspect.ListOptions{MaxBytes: budget, Count: strict}
	var sel inspect.Selected
	if o.Sort == "created" && sessionview.Streams(out) {
		lw := sessionview.NewListWriter(out)
		if sel, err = inspect.ListStream(ctx, svc, lo, o, lw); err == nil {
			err = lw.Close(sel, o)
		}
	} else {
		bar := out.NewBar("reading sessions")
		lo.Progress = bar.Start
		sel, err = inspect.ListSelect(ctx, svc, lo, o)
		bar.Finish()
		if err == nil {
			err = sessionview.PrintList(out, sel, o)
		}
	}
	if err != nil {
		return err
	}
	if strict && sel.Unreadable > 0 {
		return fmt.Errorf("%s cannot be read (see state %q)", termui.Count(sel.Unreadable, "session"), inspect.StateError)
	}
	return nil
}

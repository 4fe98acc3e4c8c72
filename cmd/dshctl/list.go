package main

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

type listOptions struct {
	all    bool
	strict bool
	limit  int
	sort   string
	proj   string
	budget int64
}

func newListCmd(e *env, g *globals) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sessions of the store, newest activity first",
		Long: `List the sessions of the store, newest activity first.

Only each log's header and tail are read. A session is hidden as blank only
when it is proven to hold no turn; "updated" is the later of its creation and
its last human prompt, never the file's mtime. A session dsh cannot read is
listed with state "error" and the reason (on stderr, and under "error" in
JSON); the command still exits 0 unless --strict is given.

States: blank (no turn yet), open (the last turn has no turn/end), done,
error.

On a terminal, a table fitted to its width. Piped, one line per session of
tab-separated fields, no header: id, project, createdAt, updatedAt (RFC 3339,
UTC, milliseconds), eventCount, sizeBytes, state, origin, parentSession,
generation, encoding; an unknown or absent value is empty. -o json and
-o jsonl give every field, the same as stat's.`,
		Example: `  dshctl list
  dshctl list --all --sort size --limit 20
  dshctl list --project ~/src/app -o json
  dshctl list | cut -f1                       # full ids
  dshctl list -o json | jq -r 'sort_by(.updatedAt)[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := g.outputFormat(formatTable, listFormats...)
			if err != nil {
				return err
			}
			if !slices.Contains(inspect.SortKeys, o.sort) {
				return termui.Usagef("--sort %q: want created, updated, size or events", o.sort)
			}
			if o.limit < 0 {
				return termui.Usagef("--limit must not be negative")
			}
			if o.budget <= 0 {
				return termui.Usagef("--scan-budget must be positive")
			}
			if o.proj != "" {
				if o.proj, err = filepath.Abs(o.proj); err != nil {
					return termui.Usage(err)
				}
			}
			return runList(cmd.Context(), e, g, format, &o)
		},
	}
	setFormats(cmd, listFormats...)
	f := cmd.Flags()
	f.BoolVarP(&o.all, "all", "a", false, "include blank sessions (hidden by default, like the web UI)")
	f.StringVar(&o.proj, "project", "", "only sessions whose cwd is `DIR`")
	f.IntVarP(&o.limit, "limit", "n", 0, "print at most `N` sessions (0: all)")
	f.StringVar(&o.sort, "sort", "updated", "order: created|updated|size|events (newest or largest first)")
	f.BoolVar(&o.strict, "strict", false, "exit 1 when any session cannot be read")
	f.Int64Var(&o.budget, "scan-budget", inspect.DefaultScanBudget, "bytes read per session and direction to prove blankness and find the last prompt")
	return cmd
}

func runList(ctx context.Context, e *env, g *globals, format string, o *listOptions) error {
	svc, err := g.openStore(e, store.Options{AllowUnknownTypes: true})
	if err != nil {
		return err
	}
	defer svc.Close()
	var bar *termui.Progress
	rows, err := inspect.List(ctx, svc, inspect.ListOptions{MaxBytes: o.budget, Progress: func(n int) func() {
		bar = newProgress(e, format, "reading sessions", n)
		return func() { bar.Add(1) }
	}})
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	sel := inspect.Select(rows, inspect.Selection{All: o.all, Project: o.proj, Sort: o.sort, Limit: o.limit})
	kept := sel.Rows
	// One write per buffer, not per session: a list of thousands is
	// otherwise thousands of write calls.
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	switch format {
	case formatJSON:
		items := make([]sessionview.JSON, len(kept))
		for i, it := range kept {
			items[i] = sessionview.NewJSON(it, sessionview.Reason)
		}
		err = writeJSON(out, format, items)
	case formatJSONL:
		for _, it := range kept {
			if err = writeJSON(out, format, sessionview.NewJSON(it, sessionview.Reason)); err != nil {
				break
			}
		}
	default:
		err = printList(e, out, kept)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if len(kept) == 0 && format == formatTable {
		fmt.Fprintln(e.stderr, noSessions(o, sel.Hidden))
	}
	if o.strict && sel.Unreadable > 0 {
		return fmt.Errorf("%s cannot be read (see state %q)", termui.Count(sel.Unreadable, "session"), inspect.StateError)
	}
	return nil
}

// noSessions says why a list is empty.
func noSessions(o *listOptions, hidden int) string {
	msg := "no sessions"
	if o.proj != "" {
		msg += " in project " + o.proj
	}
	switch {
	case hidden == 1:
		msg += " (1 blank session is hidden: --all shows it)"
	case hidden > 1:
		msg += fmt.Sprintf(" (%d blank sessions are hidden: --all shows them)", hidden)
	}
	return msg
}

func printList(e *env, w *bufio.Writer, items []*inspect.Session) error {
	t := e.newTable(w, sessionview.Columns...)
	names := sessionview.AddRows(t, items, e.now())
	err := t.Render()
	if err == nil {
		err = w.Flush() // the table before the reasons on a shared terminal
	}
	if err != nil {
		return err
	}
	// The reasons are too long for a table cell; they go to stderr whole.
	for i := range items {
		if items[i].State == inspect.StateError {
			fmt.Fprintf(e.stderr, "dshctl: %s: %s\n", names[i], sessionview.Reason(items[i].Err))
		}
	}
	return nil
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/spf13/cobra"
)

// listGCPercent is list's GC target (see runList).
const listGCPercent = 25

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
its last human prompt, never the file's mtime. A session that cannot be read
is listed with state "error" and the reason; the command still exits 0
unless --strict is given.`,
		Example: `  dshctl list
  dshctl list --all --sort size --limit 20
  dshctl list --project ~/src/app -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := g.outputFormat(formatTable, formatTable, formatJSON, formatJSONL)
			if err != nil {
				return err
			}
			if !slices.Contains(inspect.SortKeys, o.sort) {
				return usagef("--sort %q: want created, updated, size or events", o.sort)
			}
			if o.limit < 0 {
				return usagef("--limit must not be negative")
			}
			if o.budget <= 0 {
				return usagef("--scan-budget must be positive")
			}
			if o.proj != "" {
				if o.proj, err = filepath.Abs(o.proj); err != nil {
					return usageError{err}
				}
			}
			return runList(cmd.Context(), e, g, format, &o)
		},
	}
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
	svc, err := g.openStore(e, store.Options{})
	if err != nil {
		return err
	}
	defer svc.Close()
	if e.getenv("GOGC") == "" {
		// list keeps every row until it can sort them, while reading
		// the logs makes far more garbage than it keeps: a lower GC
		// target holds the peak heap near the rows, not twice them.
		defer debug.SetGCPercent(debug.SetGCPercent(listGCPercent))
	}
	var bar *progress
	rows, err := inspect.List(ctx, svc, inspect.ListOptions{MaxBytes: o.budget, Progress: func(n int) func() {
		bar = newProgress(e, format, "reading sessions", n)
		return func() { bar.add(1) }
	}})
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		return err
	}
	unreadable := 0
	kept := make([]*inspect.ListRow, 0, len(rows))
	for i := range rows {
		it := &rows[i]
		if it.State == inspect.StateError {
			unreadable++
		}
		if it.Blank && !o.all {
			continue
		}
		if o.proj != "" && filepath.Clean(it.Project) != o.proj {
			continue
		}
		kept = append(kept, it)
	}
	inspect.SortRows(kept, o.sort)
	if o.limit > 0 && len(kept) > o.limit {
		kept = kept[:o.limit]
	}
	// One write per buffer, not per session: a list of thousands is
	// otherwise thousands of write calls.
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	switch format {
	case formatJSON:
		err = writeJSON(out, format, kept)
	case formatJSONL:
		for i := range kept {
			if err = writeJSON(out, format, kept[i]); err != nil {
				break
			}
		}
	default:
		err = printList(e, out, kept, o.all)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if o.strict && unreadable > 0 {
		return fmt.Errorf("%s cannot be read (see state %q)", count(unreadable, "session"), inspect.StateError)
	}
	return nil
}

func printList(e *env, w *bufio.Writer, items []*inspect.ListRow, all bool) error {
	if len(items) == 0 {
		msg := "no sessions"
		if !all {
			msg += " (blank ones are hidden: --all shows them)"
		}
		_, err := fmt.Fprintln(e.stderr, msg)
		return err
	}
	ids := make([]string, len(items))
	for i := range items {
		ids[i] = items[i].ID
	}
	short := store.ShortIDs(ids, 12)
	now := e.now()
	rows := make([][]string, 0, len(items))
	for i, it := range items {
		created, updated := "-", "-"
		if it.CreatedAt != nil {
			created = relTime(it.CreatedAt.Ms, now)
		}
		if it.UpdatedAt != nil {
			updated = relTime(it.UpdatedAt.Ms, now)
			if it.UpdatedApproximate {
				updated = "~" + updated
			}
		}
		state := it.State
		rel := "-"
		switch {
		case it.Origin != "" && it.ParentSession != "":
			rel = it.Origin + " of " + truncate(it.ParentSession, 16)
		case it.ParentSession != "":
			rel = "fork of " + truncate(it.ParentSession, 16)
		case it.Origin != "":
			rel = it.Origin
		}
		gen := fmt.Sprintf("v%d %s", it.Location.Generation, it.Location.Encoding)
		events := "-"
		if it.EventCount != nil {
			events = strconv.FormatInt(*it.EventCount, 10)
		}
		rows = append(rows, []string{short[i], truncate(orDash(it.Project), 40), created, updated,
			events, humanBytes(it.SizeBytes), state, rel, gen})
	}
	err := renderTable(w,
		[]string{"ID", "PROJECT", "CREATED", "UPDATED", "EVENTS", "SIZE", "STATE", "PARENT", "FORMAT"}, rows)
	if err == nil {
		err = w.Flush() // the table before the reasons on a shared terminal
	}
	if err != nil {
		return err
	}
	// The reasons are too long for a table cell; they go to stderr whole.
	for i := range items {
		if items[i].State == inspect.StateError {
			fmt.Fprintf(e.stderr, "dshctl: %s: %s\n", short[i], items[i].Error)
		}
	}
	return nil
}

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

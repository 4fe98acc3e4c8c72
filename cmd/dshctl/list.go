package main

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/store"
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
	unreadable, hidden := 0, 0
	kept := make([]*inspect.Session, 0, len(rows))
	for i := range rows {
		it := &rows[i]
		if o.proj != "" && (!it.HeaderKnown || filepath.Clean(it.Snapshot.Header.Cwd) != o.proj) {
			continue
		}
		if it.State == inspect.StateError {
			unreadable++
		}
		if it.State == inspect.StateBlank && !o.all {
			hidden++
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
		items := make([]sessionJSON, len(kept))
		for i, it := range kept {
			items[i] = newSessionJSON(it)
		}
		err = writeJSON(out, format, items)
	case formatJSONL:
		for _, it := range kept {
			if err = writeJSON(out, format, newSessionJSON(it)); err != nil {
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
		fmt.Fprintln(e.stderr, noSessions(o, hidden))
	}
	if o.strict && unreadable > 0 {
		return fmt.Errorf("%s cannot be read (see state %q)", count(unreadable, "session"), inspect.StateError)
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

// listColumns are the table's columns; piped, list prints listFields.
var listColumns = []string{"ID", "PROJECT", "CREATED", "UPDATED", "EVENTS", "SIZE", "STATE", "PARENT", "FORMAT"}

func printList(e *env, w *bufio.Writer, items []*inspect.Session) error {
	ids := make([]string, len(items))
	for i := range items {
		ids[i] = items[i].ID()
	}
	t := e.newTable(w, listColumns...)
	t.giveWay(1, 7) // the project and the parent
	short := ids
	if t.tty() {
		short = store.ShortIDs(ids, 12)
	}
	now := e.now()
	for i, it := range items {
		if t.tty() {
			t.row(listCells(it, short[i], now)...)
		} else {
			t.row(listFields(it)...)
		}
	}
	err := t.render()
	if err == nil {
		err = w.Flush() // the table before the reasons on a shared terminal
	}
	if err != nil {
		return err
	}
	// The reasons are too long for a table cell; they go to stderr whole.
	for i := range items {
		if items[i].State == inspect.StateError {
			fmt.Fprintf(e.stderr, "dshctl: %s: %s\n", short[i], reason(items[i].Err))
		}
	}
	return nil
}

// listCells is a session as the table shows it to people.
func listCells(it *inspect.Session, id string, now time.Time) []string {
	h, known := &it.Snapshot.Header, it.HeaderKnown
	created, updated, events, project := "-", "-", "-", "-"
	if known {
		created, updated = relTime(h.CreatedAt, now), relTime(it.UpdatedAt(), now)
		if it.MetaKnown && it.Meta.Approximate {
			updated = "~" + updated
		}
		events = strconv.FormatInt(it.Snapshot.EventCount, 10)
		project = orDash(h.Cwd)
	}
	rel := "-"
	switch {
	case h.Origin != "" && h.ParentSession != "":
		rel = h.Origin + " of " + h.ParentSession
	case h.ParentSession != "":
		rel = "fork of " + h.ParentSession
	case h.Origin != "":
		rel = h.Origin
	}
	loc := &it.Snapshot.Location
	return []string{id, project, created, updated, events, humanBytes(it.Snapshot.SizeBytes), it.State, rel,
		fmt.Sprintf("v%d %s", loc.Generation, loc.Encoding)}
}

// listFields is a session as list prints it to a script: full id, project,
// created, updated (RFC 3339), event count, size in bytes, state, origin,
// parent id, generation and encoding; an unknown or absent value is empty.
func listFields(it *inspect.Session) []string {
	h, known := &it.Snapshot.Header, it.HeaderKnown
	var created, updated, events string
	if known {
		created, updated = timestamp(h.CreatedAt), timestamp(it.UpdatedAt())
		events = strconv.FormatInt(it.Snapshot.EventCount, 10)
	}
	loc := &it.Snapshot.Location
	return []string{h.ID, h.Cwd, created, updated, events, strconv.FormatInt(it.Snapshot.SizeBytes, 10), it.State,
		h.Origin, h.ParentSession, strconv.Itoa(loc.Generation), loc.Encoding}
}

package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/spf13/cobra"
)

// listItem is one row of `list`, and its stable JSON shape.
type listItem struct {
	ID                 string            `json:"id"`
	Project            string            `json:"project,omitempty"`
	CreatedAt          *timeJSON         `json:"createdAt,omitempty"`
	UpdatedAt          *timeJSON         `json:"updatedAt,omitempty"`
	UpdatedApproximate bool              `json:"updatedApproximate"`
	LastPromptAt       *timeJSON         `json:"lastPromptAt"`
	EventCount         *int64            `json:"eventCount,omitempty"` // nil when unreadable
	SizeBytes          int64             `json:"sizeBytes"`
	State              string            `json:"state"`
	Blank              bool              `json:"blank"`
	OpenTurn           *inspect.OpenTurn `json:"openTurn,omitempty"`
	Origin             string            `json:"origin,omitempty"`
	ParentSession      string            `json:"parentSession,omitempty"`
	Version            int               `json:"version"`
	Location           seam.Location     `json:"location"`
	Revision           string            `json:"revision,omitempty"`
	Error              string            `json:"error,omitempty"`
}

const stateError = "error"

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
			if !slices.Contains([]string{"created", "updated", "size", "events"}, o.sort) {
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
	svc, err := g.openStore(e)
	if err != nil {
		return err
	}
	defer svc.Close()
	var items []listItem
	if ol, ok := svc.(seam.OpenLister); ok {
		items, err = listItemsOpen(ctx, e, format, ol, o.budget)
	} else {
		var entries []seam.Entry
		if entries, err = svc.List(ctx); err != nil {
			return err
		}
		bar := newProgress(e, format, "reading sessions", len(entries))
		items, err = listItems(ctx, svc, entries, o.budget, bar.add)
		bar.finish()
	}
	if err != nil {
		return err
	}
	unreadable := 0
	kept := make([]*listItem, 0, len(items))
	for i := range items {
		it := &items[i]
		if it.State == stateError {
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
	sortItems(kept, o.sort)
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
		return fmt.Errorf("%s cannot be read (see state %q)", count(unreadable, "session"), stateError)
	}
	return nil
}

// listItems reads the metadata of every entry, several at a time: the work
// is a few small reads per session, so it is bound by I/O latency.
func listItems(ctx context.Context, svc seam.Service, entries []seam.Entry, budget int64, done func(int)) ([]listItem, error) {
	items := make([]listItem, len(entries))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(len(entries), 2*runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				items[i] = listItemOf(ctx, svc, entries[i], budget)
				done(1)
			}
		}()
	}
	for i := range entries {
		select {
		case work <- i:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	return items, ctx.Err()
}

// listItemsOpen is listItems for a service that opens each session in the
// listing pass (seam.OpenLister): one open per session. The items come in
// no particular order.
func listItemsOpen(ctx context.Context, e *env, format string, ol seam.OpenLister, budget int64) ([]listItem, error) {
	var (
		mu    sync.Mutex
		items []listItem
		bar   *progress
	)
	found := func(n int) {
		bar = newProgress(e, format, "reading sessions", n)
		items = make([]listItem, 0, n)
	}
	err := ol.ListOpen(ctx, found, func(en seam.Entry, h seam.Handle, openErr error) {
		it := listItemWith(ctx, en, budget, func() (seam.Handle, error) { return h, openErr })
		mu.Lock()
		items = append(items, it)
		mu.Unlock()
		if bar != nil {
			bar.add(1)
		}
	})
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		return nil, err
	}
	return items, nil
}

func listItemOf(ctx context.Context, svc seam.Service, en seam.Entry, budget int64) listItem {
	return listItemWith(ctx, en, budget, func() (seam.Handle, error) {
		h, err := svc.Open(ctx, en.Snapshot.Header.ID, seam.Read)
		if err != nil {
			return nil, err
		}
		return closeOnce{h}, nil
	})
}

// closeOnce is a handle listItemWith closes.
type closeOnce struct{ seam.Handle }

// listItemWith builds the item of en, reading its metadata from the handle
// open returns (closed afterwards when it is a closeOnce).
func listItemWith(ctx context.Context, en seam.Entry, budget int64, open func() (seam.Handle, error)) listItem {
	s := en.Snapshot
	it := listItem{
		ID:            s.Header.ID,
		Project:       s.Header.Cwd,
		SizeBytes:     s.SizeBytes,
		Origin:        s.Header.Origin,
		ParentSession: s.Header.ParentSession,
		Version:       s.Header.Version,
		Location:      s.Location,
		Revision:      s.Revision,
	}
	if s.Header.CreatedAt > 0 || en.Err == nil {
		it.CreatedAt = msTime(s.Header.CreatedAt)
		it.UpdatedAt = it.CreatedAt
	}
	fail := func(err error) listItem {
		it.State, it.Error = stateError, err.Error()
		it.Blank = false
		return it
	}
	if en.Err != nil {
		return fail(en.Err)
	}
	it.EventCount = &s.EventCount
	h, err := open()
	if err != nil {
		return fail(err)
	}
	if c, ok := h.(closeOnce); ok {
		defer c.Close()
	}
	meta, err := inspect.ReadMeta(ctx, h, inspect.MetaOptions{MaxBytes: budget})
	if err != nil {
		return fail(err)
	}
	it.Blank = meta.Blank
	it.OpenTurn = meta.OpenTurn
	it.UpdatedAt = msTime(meta.UpdatedAt)
	it.UpdatedApproximate = meta.Approximate
	if meta.LastPromptAt > 0 {
		it.LastPromptAt = msTime(meta.LastPromptAt)
	}
	it.State = stateWord(meta.Blank, meta.OpenTurn)
	return it
}

// sortItems orders items newest or largest first, then by id and location:
// a total order, so the output does not depend on the order of the listing.
func sortItems(items []*listItem, by string) {
	key := func(it *listItem) int64 {
		switch by {
		case "created":
			return msOf(it.CreatedAt)
		case "size":
			return it.SizeBytes
		case "events":
			if it.EventCount == nil {
				return -1
			}
			return *it.EventCount
		}
		return msOf(it.UpdatedAt)
	}
	slices.SortFunc(items, func(a, b *listItem) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), strings.Compare(a.ID, b.ID),
			strings.Compare(a.Location.Path, b.Location.Path))
	})
}

func msOf(t *timeJSON) int64 {
	if t == nil {
		return 0
	}
	return t.Ms
}

func printList(e *env, w *bufio.Writer, items []*listItem, all bool) error {
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
	short := shortIDs(ids, 12)
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
		if items[i].State == stateError {
			fmt.Fprintf(e.stderr, "dshctl: %s: %s\n", short[i], items[i].Error)
		}
	}
	return nil
}

// shortIDs returns for each id its shortest prefix of at least minLen
// characters that no other id shares, like a short git hash.
func shortIDs(ids []string, minLen int) []string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	common := func(a, b string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		j, _ := slices.BinarySearch(sorted, id)
		need := minLen
		if j > 0 {
			need = max(need, common(id, sorted[j-1])+1)
		}
		if j+1 < len(sorted) {
			need = max(need, common(id, sorted[j+1])+1)
		}
		for need < len(id) && !utf8.RuneStart(id[need]) {
			need++
		}
		if need >= len(id) {
			out[i] = id
		} else {
			out[i] = id[:need]
		}
	}
	return out
}

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

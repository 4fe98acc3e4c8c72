package sessionview

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/ingest"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
)

// printItems prints items as o.Format asks: one JSON array, or a JSON line
// each, of their views; else with human. It writes through one buffer: a
// list of thousands is one write per buffer, not one per item.
func printItems[T any](o termui.Out, items []T, view func(T) any, human func(w *bufio.Writer) error) error {
	w := bufio.NewWriterSize(o.Stdout, 64<<10)
	var err error
	switch o.Format {
	case termui.FormatJSON:
		views := make([]any, len(items))
		for i, it := range items {
			views[i] = view(it)
		}
		err = o.WriteJSON(w, views)
	case termui.FormatJSONL:
		for i := 0; i < len(items) && err == nil; i++ {
			err = o.WriteJSON(w, view(items[i]))
		}
	default:
		err = human(w)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// PrintList prints the sessions list kept (sel): their JSON, or a table of
// Columns (see AddRows) with the reason each unreadable one cannot be read
// on stderr, and, when the table is empty, why (NoSessions) on stderr.
// s is what the list was asked to select.
func PrintList(o termui.Out, sel inspect.Selected, s inspect.Selection) error {
	view := func(s *inspect.Session) any { return NewJSON(s, Reason) }
	err := printItems(o, sel.Rows, view, func(w *bufio.Writer) error {
		t := o.NewTable(w, Columns...)
		names := AddRows(t, sel.Rows, o.Now())
		if err := t.Render(); err != nil {
			return err
		}
		if err := w.Flush(); err != nil { // the table before the reasons on a shared terminal
			return err
		}
		// The reasons are too long for a table cell; they go to stderr whole.
		for i, s := range sel.Rows {
			warnUnreadable(o, names[i], s)
		}
		return nil
	})
	if err == nil && len(sel.Rows) == 0 && o.Format == termui.FormatTable {
		fmt.Fprintln(o.Stderr, NoSessions(s, sel.Hidden))
	}
	return err
}

// warnUnreadable tells on stderr why s, shown as name, cannot be read, if
// it cannot.
func warnUnreadable(o termui.Out, name string, s *inspect.Session) {
	if s.State == inspect.StateError {
		fmt.Fprintf(o.Stderr, "dshctl: %s: %s\n", name, Reason(s.Err))
	}
}

// Streams reports whether a ListWriter can print list rows in o's format:
// every format but the table for people, which needs all its rows to fit
// its columns.
func Streams(o termui.Out) bool { return o.Format != termui.FormatTable || !o.TTY }

// ListWriter prints list rows as they come, byte for byte as PrintList
// prints them all (see Streams): a JSON array written an element at a
// time, JSON lines, or a line of fields each, an unreadable session's
// reason on stderr after its line. It buffers: Flush shows what it has.
type ListWriter struct {
	o   termui.Out
	w   *bufio.Writer
	n   int
	buf bytes.Buffer
}

// NewListWriter is a ListWriter on o.Stdout.
func NewListWriter(o termui.Out) *ListWriter {
	return &ListWriter{o: o, w: bufio.NewWriterSize(o.Stdout, 64<<10)}
}

// Row prints s.
func (lw *ListWriter) Row(s *inspect.Session) error {
	lw.n++
	switch lw.o.Format {
	case termui.FormatJSON:
		// One element of the array termui.WriteJSON indents.
		lw.buf.Reset()
		if err := termui.WriteJSON(&lw.buf, true, NewJSON(s, Reason)); err != nil {
			return err
		}
		sep := ",\n  "
		if lw.n == 1 {
			sep = "[\n  "
		}
		lw.w.WriteString(sep)
		_, err := lw.w.Write(bytes.ReplaceAll(bytes.TrimSuffix(lw.buf.Bytes(), []byte("\n")), []byte("\n"), []byte("\n  ")))
		return err
	case termui.FormatJSONL:
		return lw.o.WriteJSON(lw.w, NewJSON(s, Reason))
	}
	t := lw.o.NewTable(lw.w, Columns...)
	names := AddRows(t, []*inspect.Session{s}, lw.o.Now())
	if err := t.Render(); err != nil {
		return err
	}
	if s.State == inspect.StateError {
		if err := lw.w.Flush(); err != nil { // the line before its reason on a shared terminal
			return err
		}
		warnUnreadable(lw.o, names[0], s)
	}
	return nil
}

// Flush writes what is buffered.
func (lw *ListWriter) Flush() error { return lw.w.Flush() }

// Close ends the output (the JSON array) and flushes it; when no row was
// printed, it says why as PrintList does, sel being what the listing
// counted and s what it was asked to select.
func (lw *ListWriter) Close(sel inspect.Selected, s inspect.Selection) error {
	if lw.o.Format == termui.FormatJSON {
		end := "\n]\n"
		if lw.n == 0 {
			end = "[]\n"
		}
		lw.w.WriteString(end)
	}
	err := lw.w.Flush()
	if err == nil && lw.n == 0 && lw.o.Format == termui.FormatTable {
		fmt.Fprintln(lw.o.Stderr, NoSessions(s, sel.Hidden))
	}
	return err
}

// PrintExports tells what export wrote: for people, the fields of one ZIP
// or a table of several; for scripts, a line per ZIP (id, path, events,
// subagents, bytes); or JSON.
func PrintExports(o termui.Out, results []export.Result) error {
	items := NewExports(results)
	return printItems(o, items, func(it ExportJSON) any { return it }, func(w *bufio.Writer) error {
		switch {
		case len(items) == 1 && o.TTY:
			return ExportFields(items[0]).Print(w, true)
		case len(items) > 0:
			t := o.NewTable(w, ExportColumns...)
			AddExportRows(t, items)
			return t.Render()
		}
		return nil
	})
}

// WarnUnsupported says on w which exported logs dsh would refuse: a
// plugin's event types are exported whole, as cat shows them.
func WarnUnsupported(w io.Writer, entries []export.Entry) {
	for _, en := range entries {
		if ut := en.Unsupported; ut != nil {
			fmt.Fprintf(w, "dshctl: warning: %s of %q holds event types %s unknown to format v%d and not ignorable: exported whole, but dsh refuses this log unless a plugin registers them\n",
				en.Name, en.ID, strings.Join(ut.Counted(), ", "), ut.Version)
		}
	}
}

// PrintStat prints r as stat does: its JSON (StatJSON), or StatFields.
func PrintStat(o termui.Out, r *inspect.StatReport) error {
	if o.IsJSON() {
		return o.WriteJSON(o.Stdout, NewStatJSON(r, Reason))
	}
	return StatFields(r, o.Now(), Reason).Print(o.Stdout, o.TTY)
}

// AppendJSON is what append did, as JSON: ingest.Result, its repairs
// as RepairJSON.
type AppendJSON struct {
	*ingest.Result
	Repairs []RepairJSON `json:"repairs"`
}

// PrintAppend prints what append did: its JSON; for people AppendSummary;
// for scripts a row of tab-separated fields (AppendRow), the summary on
// stderr, as verify does.
func PrintAppend(o termui.Out, r *ingest.Result) error {
	switch {
	case o.IsJSON():
		return o.WriteJSON(o.Stdout, AppendJSON{r, NewRepairsJSON(r.Repairs)})
	case o.TTY:
		_, err := fmt.Fprintln(o.Stdout, AppendSummary(r))
		return err
	}
	t := o.NewTable(o.Stdout)
	t.Row(AppendRow(r)...)
	if err := t.Render(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(o.Stderr, "dshctl: "+AppendSummary(r))
	return err
}

// ReportExports tells what a batch export did (results, one per session):
// a warning per log dsh would refuse, a line per session that failed on
// stderr, then the ZIPs written (PrintExports). Its error says how many
// were not exported; an interruption (ctx done) is said once.
func ReportExports(ctx context.Context, o termui.Out, results []export.Result) error {
	var ok []export.Result
	for _, r := range results {
		switch {
		case r.Err == nil:
			WarnUnsupported(o.Stderr, r.Entries)
			ok = append(ok, r)
		case ctx.Err() == nil || !errors.Is(r.Err, context.Canceled):
			err := Explain(r.Err)
			fmt.Fprintf(o.Stderr, "dshctl: export %q: %s\n", r.ID, termui.OneLineError(err))
			var near *store.NearError
			if errors.As(r.Err, &near) { // a name a typo away from a session
				fmt.Fprintf(o.Stderr, "hint: %s\n", near.Hint())
			}
		}
	}
	if err := PrintExports(o, ok); err != nil {
		return err
	}
	failed := fmt.Sprintf("%d of %s not exported", len(results)-len(ok), termui.Count(len(results), "session"))
	switch {
	case ctx.Err() != nil:
		return errors.New("export interrupted: " + failed)
	case len(ok) == len(results):
		return nil
	case slices.ContainsFunc(results, func(r export.Result) bool { return errors.Is(r.Err, export.ErrExists) }):
		return termui.WithHint(errors.New(failed), "use --force to replace existing files")
	}
	return errors.New(failed)
}

// WriteZIP writes the ZIP write makes to stdout (export -O -), refusing a
// terminal unless force; it warns of the logs dsh would refuse and words
// a failure (ExplainExport).
func WriteZIP(o termui.Out, force bool, write func(w io.Writer) ([]export.Entry, error)) error {
	if o.TTY && !force {
		return termui.WithHint(errors.New("refusing to write a ZIP to a terminal"), "redirect standard output, or use -O FILE")
	}
	w := bufio.NewWriterSize(o.Stdout, 256<<10)
	entries, err := write(w)
	if err == nil {
		err = w.Flush()
	}
	WarnUnsupported(o.Stderr, entries)
	return ExplainExport(err)
}

// ExplainExport words the failure of a single export.
func ExplainExport(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return errors.New("export interrupted")
	case errors.Is(err, export.ErrStoreFile):
		return termui.Usage(err)
	case errors.Is(err, export.ErrExists):
		return termui.WithHint(err, "use --force to replace it, or -O to write elsewhere")
	case errors.As(err, new(*export.SubagentError)):
		return termui.WithHint(err, "--no-subagents exports the session without its subagents")
	}
	return Explain(err)
}

// PrintLog streams the log h reads (inspect.Stream) to w as cat does in
// o.Format (see LogSink), and says on stderr how many synthetic closers
// it added. A log holding event types dsh refuses is printed whole, then
// refused.
func PrintLog(ctx context.Context, o termui.Out, w io.Writer, h seam.Handle, so inspect.StreamOptions, header bool, width int, widthSet bool) error {
	sink := LogSink(ctx, o, w, header, width, widthSet)
	if tr, ok := sink.(*inspect.Transcript); ok && !so.Follow && !so.Filter.HasTo && len(so.Filter.Types) == 0 && !so.Filter.Time.IsSet() {
		tr.MarkOpenTurn() // the log is read to its end, every turn/end seen
	}
	res, err := inspect.Stream(ctx, h, so, sink)
	if res.Closers > 0 && o.Format != termui.FormatJSON {
		fmt.Fprintf(o.Stderr, "dshctl: %s for the interrupted turn printed, not stored\n", termui.Count(res.Closers, "synthetic closer"))
	}
	if f := so.Filter; err == nil && res.Matched == 0 && !so.Follow && (f.From > 0 || f.HasTo || len(f.Types) > 0 || f.Time.IsSet()) {
		// A filter that matches nothing is said, not left to a silent
		// exit 0.
		fmt.Fprintln(o.Stderr, "dshctl: "+NoMatch(ctx, f, h))
	}
	var ut *inspect.UnknownTypesError
	if errors.As(err, &ut) {
		return ut.Refusal("cat") // after every event was printed
	}
	return Explain(err)
}

// NoMatch says why filter f printed no event of the log h reads: past its
// last seq, or no event of it matched.
func NoMatch(ctx context.Context, f inspect.FilterOptions, h seam.Handle) string {
	var given []string
	for _, t := range f.Types {
		if strings.ContainsAny(t, "*?[ ") {
			t = "'" + t + "'" // as it is typed
		}
		given = append(given, "--type "+t)
	}
	if f.From > 0 {
		given = append(given, fmt.Sprintf("--from %d", f.From))
	}
	if f.HasTo {
		given = append(given, fmt.Sprintf("--to %d", f.To))
	}
	if f.Time.HasSince {
		given = append(given, "--since "+termui.Timestamp(f.Time.Since))
	}
	if f.Time.HasUntil {
		given = append(given, "--until "+termui.Timestamp(f.Time.Until))
	}
	s, err := h.Snapshot(ctx)
	switch {
	case err != nil:
		return "no event matched " + strings.Join(given, " ")
	case s.EventCount == 0:
		return "no event printed: the log has no events"
	case f.From >= s.EventCount:
		return fmt.Sprintf("no event printed: --from %d is past the log's last seq, %d", f.From, s.EventCount-1)
	}
	return fmt.Sprintf("no event matched %s (the log's events are seq 0 to %d)", strings.Join(given, " "), s.EventCount-1)
}

// PrintRaw prints the records h reads as stored (export.WriteRaw) to w,
// and says on stderr what lies past the records dsh serves (RawTailNote)
// and any torn tail, which is never printed.
func PrintRaw(ctx context.Context, o termui.Out, w *bufio.Writer, h seam.Handle, ro export.RawOptions) error {
	res, err := export.WriteRaw(ctx, w, h, ro)
	if errors.Is(err, export.ErrNoRaw) {
		return errors.New("this store has no physical records to print: --raw needs a JSONL store")
	}
	if ferr := w.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	if note := RawTailNote(res, ro.Tail, err != nil); note != "" {
		fmt.Fprintln(o.Stderr, "dshctl: "+note)
	}
	if snap, serr := h.Snapshot(ctx); serr == nil && snap.Location.TornBytes > 0 {
		fmt.Fprintf(o.Stderr, "dshctl: not printed: a %d-byte torn tail (an incomplete append, never read)\n", snap.Location.TornBytes)
	}
	return Explain(err)
}

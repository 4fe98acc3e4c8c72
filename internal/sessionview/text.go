package sessionview

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
)

// Columns are list's table columns; piped, list prints fields (see
// AddRows).
var Columns = []string{"ID", "PROJECT", "CREATED", "UPDATED", "EVENTS", "SIZE", "STATE", "PARENT", "FORMAT"}

// AddRows adds a row per session to t, a table of Columns: for people the
// short unique ids and human values, fitted by cutting the project and the
// parent, then leaving out the format, the parent and the creation time; for scripts the full id, project, created, updated (RFC 3339),
// event count, size in bytes, state, origin, parent id, generation and
// encoding, empty when unknown or absent. It returns the name each session
// is shown by.
func AddRows(t *termui.Table, items []*inspect.Session, now time.Time) []string {
	ids := make([]string, len(items))
	for i := range items {
		ids[i] = items[i].ID()
	}
	if !t.TTY() {
		for _, it := range items {
			t.Row(fields(it)...)
		}
		return ids
	}
	t.GiveWay(1, 7)
	// FORMAT, PARENT, CREATED (the table is sorted by activity), then SIZE
	// and EVENTS on the narrowest terminals: ID, PROJECT, UPDATED and STATE
	// fit 40 columns.
	t.Drop(8, 7, 2, 5, 4)
	// Parents are named as the rows are, by their shortest unique prefix
	// among the ids shown and the parents named.
	all := slices.Clone(ids)
	for _, it := range items {
		if p := it.Snapshot.Header.ParentSession; p != "" {
			all = append(all, p)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	shortOf := make(map[string]string, len(all))
	for i, s := range store.ShortIDs(all, 12) {
		shortOf[all[i]] = s
	}
	short := make([]string, len(ids))
	for i, it := range items {
		short[i] = shortOf[ids[i]]
		parent := shortOf[it.Snapshot.Header.ParentSession]
		t.Row(cells(it, short[i], parent, now)...)
		if parent != "" {
			t.Short(7, parent) // rather than cutting the id
		}
	}
	return short
}

// cells is a session as the table shows it to people.
func cells(it *inspect.Session, id, parent string, now time.Time) []string {
	h, known := &it.Snapshot.Header, it.HeaderKnown
	created, updated, events, project := "-", "-", "-", "-"
	if known {
		created, updated = termui.RelTime(h.CreatedAt, now), termui.RelTime(it.UpdatedAt(), now)
		if it.MetaKnown && it.Meta.Approximate {
			updated = "~" + updated
		}
		events = strconv.FormatInt(it.Snapshot.EventCount, 10)
		project = orDash(h.Cwd)
	}
	rel := "-"
	switch {
	case h.Origin != "" && h.ParentSession != "":
		rel = h.Origin + " of " + parent
	case h.ParentSession != "":
		rel = "fork of " + parent
	case h.Origin != "":
		rel = h.Origin
	}
	loc := &it.Snapshot.Location
	return []string{id, project, created, updated, events, termui.Bytes(it.Snapshot.SizeBytes), it.State, rel,
		fmt.Sprintf("v%d %s", loc.Generation, loc.Encoding)}
}

// fields is a session as list prints it to a script.
func fields(it *inspect.Session) []string {
	h, known := &it.Snapshot.Header, it.HeaderKnown
	var created, updated, events string
	if known {
		created, updated = termui.Timestamp(h.CreatedAt), termui.Timestamp(it.UpdatedAt())
		events = strconv.FormatInt(it.Snapshot.EventCount, 10)
	}
	loc := &it.Snapshot.Location
	return []string{h.ID, h.Cwd, created, updated, events, strconv.FormatInt(it.Snapshot.SizeBytes, 10), it.State,
		h.Origin, h.ParentSession, strconv.Itoa(loc.Generation), loc.Encoding}
}

// NoSessions says why a list that kept the sessions s selects is empty,
// naming what it selected by (states, project, span); hidden counts the
// blank sessions left out.
func NoSessions(s inspect.Selection, hidden int) string {
	msg := "no sessions"
	if n := len(s.States); n > 0 {
		msg += " in state " + strings.Join(s.States[:n-1], ", ")
		if n > 1 {
			msg += " or "
		}
		msg += s.States[n-1]
	}
	if s.Project != "" {
		msg += " in project " + s.Project
	}
	switch a := s.Active; {
	case a.HasSince && a.HasUntil:
		msg += " active between " + termui.Timestamp(a.Since) + " and " + termui.Timestamp(a.Until)
	case a.HasSince:
		msg += " active since " + termui.Timestamp(a.Since)
	case a.HasUntil:
		msg += " active until " + termui.Timestamp(a.Until)
	}
	switch {
	case hidden == 1:
		msg += " (1 blank session is hidden: --all shows it)"
	case hidden > 1:
		msg += fmt.Sprintf(" (%d blank sessions are hidden: --all shows them)", hidden)
	}
	return msg
}

// LogSink prints a log to w as cat does in o.Format: FormatJSON, one
// document; FormatText, a transcript for people, wrapped to width when
// given (widthSet; 0: no limit) or to the terminal (o.Width); else the
// canonical JSONL, its header line only with header. The end of ctx stops
// a transcript inside a long event.
func LogSink(ctx context.Context, o termui.Out, w io.Writer, header bool, width int, widthSet bool) inspect.Sink {
	switch o.Format {
	case termui.FormatJSON:
		return export.NewDocument(w)
	case termui.FormatText:
		switch {
		case !widthSet && o.TTY:
			width = o.Width
		case width == 0:
			width = -1 // no limit
		}
		return inspect.NewTranscript(w, inspect.TranscriptOptions{Width: width, Color: o.Colour, Wrap: o.TTY || widthSet, Context: ctx})
	}
	if !header {
		return noHeader{export.NewCanonical(w)}
	}
	return export.NewCanonical(w)
}

// noHeader is a Sink without the header line, for filtered output.
type noHeader struct{ inspect.Sink }

func (noHeader) Header(*seam.Header) error { return nil }

// RawTailNote says what `cat --raw` did with the records past the last one
// dsh serves (res): printed at the end (included) or not; damaged when
// reading them failed, else an uncommitted tail. It is "" when there are
// none.
func RawTailNote(res export.RawResult, included, damaged bool) string {
	if res.TailRecords == 0 {
		return ""
	}
	what := fmt.Sprintf("%s (%d bytes from byte %d of the stored text) that dsh does not serve: ",
		termui.Count(res.TailRecords, "record"), res.TailBytes, res.TailOffset)
	if damaged {
		what += "damaged data"
	} else {
		what += "an uncommitted tail, which the next append removes"
	}
	if included {
		return "printed at the end: " + what
	}
	them := "them"
	if res.TailRecords == 1 {
		them = "it"
	}
	return "not printed: " + what + "; --include-tail prints " + them
}

// StatFields are what stat prints about r: for people aligned "key: value"
// lines, for a script "key:<TAB>value" lines with machine values (RFC 3339
// times, integer bytes, one-word states; empty when unknown or absent).
// word words the reason the session cannot be read.
func StatFields(r *inspect.StatReport, now time.Time, word func(error) string) termui.Fields {
	var f termui.Fields
	h, snap := &r.Snapshot.Header, &r.Snapshot
	f.Add("id", r.ID(), r.ID())
	f.Add("state", r.State, r.State)
	if r.Err != nil {
		msg := word(r.Err)
		f.Add("error", msg, msg)
	}
	if r.HeaderKnown {
		f.Add("version", fmt.Sprintf("v%d", h.Version), strconv.Itoa(h.Version))
		f.Add("project", orDash(h.Cwd), h.Cwd)
		f.Opt("parent", h.ParentSession, h.ParentSession)
		if h.Origin != "" {
			depth := "-"
			if !h.NoDelegationDepth {
				depth = strconv.FormatInt(h.DelegationDepth, 10)
			}
			f.Add("origin", fmt.Sprintf("%s (depth %s)", h.Origin, depth), h.Origin)
		} else {
			f.Opt("origin", "", "")
		}
		f.Opt("preset", h.AgentPreset, h.AgentPreset)
		f.Time("created", h.CreatedAt, now, "")
		note := ""
		if r.MetaKnown && r.Meta.Approximate {
			note = " approximate: the scan budget ended before the log's head and tail were settled; --exact reads it all"
		}
		f.Time("updated", r.UpdatedAt(), now, note)
	}
	if r.MetaKnown {
		if at := r.Meta.LastPromptAt; at > 0 {
			f.Time("last prompt", at, now, "")
		} else {
			f.Add("last prompt", "-", "")
		}
	}
	if r.HeaderKnown {
		f.Add("events", strconv.FormatInt(snap.EventCount, 10), strconv.FormatInt(snap.EventCount, 10))
		if r.Inherited > 0 {
			f.Add("inherited", strconv.FormatInt(r.Inherited, 10), strconv.FormatInt(r.Inherited, 10))
		}
	}
	if t := r.Meta.OpenTurn; r.MetaKnown && t != nil {
		desc := fmt.Sprintf("turn %d", t.Turn)
		if t.StepOpen {
			desc += fmt.Sprintf(", step %d open", t.Step)
		}
		if n := len(t.PendingCalls); n > 0 {
			ids := make([]string, n)
			for i, c := range t.PendingCalls {
				ids[i] = c.CallID
			}
			desc += fmt.Sprintf(", %s pending: %s", termui.Count(n, "tool call"), strings.Join(ids, ", "))
		}
		f.Add("open turn", desc, desc)
	}
	f.Add("size", fmt.Sprintf("%s (%d bytes)", termui.Bytes(snap.SizeBytes), snap.SizeBytes), strconv.FormatInt(snap.SizeBytes, 10))
	loc := snap.Location
	f.Add("path", loc.Path, loc.Path)
	f.Add("backend", fmt.Sprintf("%s, %s, generation %d", loc.Backend, loc.Encoding, loc.Generation), loc.Backend)
	f.Opt("encoding", "", loc.Encoding)
	f.Opt("generation", "", strconv.Itoa(loc.Generation))
	if len(loc.OlderGenerations) > 0 {
		gens := make([]string, len(loc.OlderGenerations))
		for i, g := range loc.OlderGenerations {
			gens[i] = strconv.Itoa(g)
		}
		f.Add("older generations", strings.Join(gens, ", "), strings.Join(gens, " "))
	}
	f.Opt("revision", snap.Revision, snap.Revision)
	if r.HeaderKnown {
		tail(&f, "torn tail", loc.TornBytes, "never read; the next append removes it, saving the bytes to a backup")
		tail(&f, "uncommitted tail", loc.UncommittedBytes, "never served; the next append removes it, saving the bytes to a backup")
		lock := map[bool]string{true: "held by another process", false: "free"}[r.LockHeld]
		if loc.Backend == "sqlite" {
			// The lock is dshctl's own: dsh takes none in a SQLite store.
			lock = map[bool]string{true: "held by another dshctl writer", false: "free (of dshctl writers; dsh takes no session lock in a SQLite store)"}[r.LockHeld]
		}
		f.Add("lock", lock, map[bool]string{true: "held", false: "free"}[r.LockHeld])
	}
	if x := r.Exact; x != nil {
		f.Add("turns", strconv.FormatInt(x.Turns, 10), strconv.FormatInt(x.Turns, 10))
		for _, kind := range termui.SortedKeys(x.TurnEnds) {
			n := strconv.FormatInt(x.TurnEnds[kind], 10)
			f.Add("  turn ends "+kind, n, n)
		}
		if x.Events > 0 {
			f.Time("first event", x.FirstTime, now, "")
			f.Time("last event", x.LastTime, now, "")
		}
		for _, typ := range termui.SortedKeys(x.ByType) {
			n := strconv.FormatInt(x.ByType[typ], 10)
			f.Add("  "+typ, n, n)
		}
	}
	return f
}

// tail adds a tail's size: "none", or its bytes and what becomes of them.
func tail(f *termui.Fields, key string, n int64, fate string) {
	human := "none"
	if n > 0 {
		human = fmt.Sprintf("%d bytes (%s)", n, fate)
	}
	f.Add(key, human, strconv.FormatInt(n, 10))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

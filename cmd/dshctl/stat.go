package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/spf13/cobra"
)

func newStatCmd(e *env, g *globals) *cobra.Command {
	var exact bool
	cmd := &cobra.Command{
		Use:   "stat SESSION",
		Short: "Show a session's metadata from its header and the tail of its log",
		Long: `Show a session's header, location, size, event count, revision, state, its
last human prompt, any open turn, a torn or uncommitted tail and whether
another process holds its write lock. Only the header and the tail of the
log are read; --exact adds a full scan (event counts by type, turns, first
and last time).

A session dsh would refuse (a log holding a plugin's event types, say) is
shown as far as it can be read, with state "error" and the reason; then the
command exits 1.

On a terminal, aligned "key: value" lines; piped, "key:<TAB>value" lines with
machine values (RFC 3339 times, integer bytes). -o json gives the fields
list gives, and lockHeld, inheritedEventCount and exact.`,
		Example: `  dshctl stat session-4f1c
  dshctl stat -o json ~/.dsh/sessions/--home-me-proj--/session-4f1c…/`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSessions(e, g, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := g.outputFormat(formatTable, listFormats...)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := g.openSession(ctx, e, args[0], store.Options{AllowUnknownTypes: true})
			if err != nil {
				return err
			}
			defer s.Close()
			r, err := inspect.Stat(ctx, s.Service, s.ID, inspect.StatOptions{Exact: exact})
			if r == nil {
				return err
			}
			// A session dsh would refuse is shown as far as it can be
			// read; the reason then fails the command, after the report.
			var perr error
			if format != formatTable {
				perr = writeJSON(e.stdout, format, newStatJSON(r))
			} else {
				perr = printStat(e, r)
			}
			if perr != nil {
				return perr
			}
			return explain(err)
		},
	}
	setFormats(cmd, listFormats...)
	cmd.Flags().BoolVar(&exact, "exact", false, "also scan the whole log: counts by type, turns, first and last time")
	return cmd
}

// printStat prints a stat report: aligned "key: value" lines for people,
// or for a script "key:\tvalue" lines with machine values (RFC 3339 times,
// integer bytes, one-word states; empty when unknown or absent).
func printStat(e *env, r *inspect.StatReport) error {
	var f fieldList
	now := e.now()
	h, snap := &r.Snapshot.Header, &r.Snapshot
	f.add("id", r.ID(), r.ID())
	f.add("state", r.State, r.State)
	if r.Err != nil {
		msg := reason(r.Err)
		f.add("error", msg, msg)
	}
	if r.HeaderKnown {
		f.add("version", fmt.Sprintf("v%d", h.Version), strconv.Itoa(h.Version))
		f.add("project", orDash(h.Cwd), h.Cwd)
		f.opt("parent", h.ParentSession, h.ParentSession)
		if h.Origin != "" {
			f.add("origin", fmt.Sprintf("%s (depth %d)", h.Origin, h.DelegationDepth), h.Origin)
		} else {
			f.opt("origin", "", "")
		}
		f.opt("preset", h.AgentPreset, h.AgentPreset)
		f.time("created", h.CreatedAt, now, "")
		note := ""
		if r.MetaKnown && r.Meta.Approximate {
			note = " approximate: the scan budget ended before the log's head and tail were settled; --exact reads it all"
		}
		f.time("updated", r.UpdatedAt(), now, note)
	}
	if r.MetaKnown {
		if at := r.Meta.LastPromptAt; at > 0 {
			f.time("last prompt", at, now, "")
		} else {
			f.add("last prompt", "-", "")
		}
	}
	if r.HeaderKnown {
		f.add("events", strconv.FormatInt(snap.EventCount, 10), strconv.FormatInt(snap.EventCount, 10))
		if r.Inherited > 0 {
			f.add("inherited", strconv.FormatInt(r.Inherited, 10), strconv.FormatInt(r.Inherited, 10))
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
			desc += fmt.Sprintf(", %s pending: %s", count(n, "tool call"), strings.Join(ids, ", "))
		}
		f.add("open turn", desc, desc)
	}
	f.add("size", fmt.Sprintf("%s (%d bytes)", humanBytes(snap.SizeBytes), snap.SizeBytes), strconv.FormatInt(snap.SizeBytes, 10))
	loc := snap.Location
	f.add("path", loc.Path, loc.Path)
	f.add("backend", fmt.Sprintf("%s, %s, generation %d", loc.Backend, loc.Encoding, loc.Generation), loc.Backend)
	f.opt("encoding", "", loc.Encoding)
	f.opt("generation", "", strconv.Itoa(loc.Generation))
	if len(loc.OlderGenerations) > 0 {
		gens := make([]string, len(loc.OlderGenerations))
		for i, g := range loc.OlderGenerations {
			gens[i] = strconv.Itoa(g)
		}
		f.add("older generations", strings.Join(gens, ", "), strings.Join(gens, " "))
	}
	f.opt("revision", snap.Revision, snap.Revision)
	if r.HeaderKnown {
		f.tail("torn tail", loc.TornBytes, "never read; the next append removes it, saving the bytes to a backup")
		f.tail("uncommitted tail", loc.UncommittedBytes, "never served; the next append removes it, saving the bytes to a backup")
		f.add("lock", map[bool]string{true: "held by another process", false: "free"}[r.LockHeld],
			map[bool]string{true: "held", false: "free"}[r.LockHeld])
	}
	if x := r.Exact; x != nil {
		f.add("turns", strconv.FormatInt(x.Turns, 10), strconv.FormatInt(x.Turns, 10))
		for _, kind := range sortedKeys(x.TurnEnds) {
			n := strconv.FormatInt(x.TurnEnds[kind], 10)
			f.add("  turn ends "+kind, n, n)
		}
		if x.Events > 0 {
			f.time("first event", x.FirstTime, now, "")
			f.time("last event", x.LastTime, now, "")
		}
		for _, typ := range sortedKeys(x.ByType) {
			n := strconv.FormatInt(x.ByType[typ], 10)
			f.add("  "+typ, n, n)
		}
	}
	return f.print(e)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

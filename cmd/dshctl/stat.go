package main

import (
	"fmt"
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
		Long: `Show a session's header, location, size, event count, revision, whether it is
blank, its last human prompt, any open turn, a torn or uncommitted tail and
whether another process holds its write lock. Only the header and the tail of the log are read;
--exact adds a full scan (event counts by type, turns, first and last time).`,
		Example: `  dshctl stat session-4f1c
  dshctl stat -o json ~/.dsh/sessions/--home-me-proj--/session-4f1c…/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := g.outputFormat(formatTable, formatTable, formatJSON, formatJSONL)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := g.openSession(ctx, e, args[0], store.Options{})
			if err != nil {
				return err
			}
			defer s.Close()
			r, err := inspect.Stat(ctx, s.Service, s.ID, inspect.StatOptions{Exact: exact})
			if err != nil {
				return err
			}
			if format != formatTable {
				return writeJSON(e.stdout, format, r)
			}
			return printStat(e, r)
		},
	}
	cmd.Flags().BoolVar(&exact, "exact", false, "also scan the whole log: counts by type, turns, first and last time")
	return cmd
}

func printStat(e *env, s *inspect.StatReport) error {
	h, now := s.Header, e.now()
	k := newKV(e.stdout)
	k.add("id", "%s", s.ID)
	k.add("version", "v%d", h.Version)
	k.add("project", "%s", orDash(h.Cwd))
	if h.ParentSession != "" {
		k.add("parent", "%s", h.ParentSession)
	}
	if h.Origin != "" {
		k.add("origin", "%s (depth %d)", h.Origin, h.DelegationDepth)
	}
	if h.AgentPreset != "" {
		k.add("preset", "%s", h.AgentPreset)
	}
	k.add("created", "%s (%s)", relTime(h.CreatedAt, now), s.CreatedAt.Time)
	updated := fmt.Sprintf("%s (%s)", relTime(s.UpdatedAt.Ms, now), s.UpdatedAt.Time)
	if s.Approximate {
		updated += " approximate"
	}
	k.add("updated", "%s", updated)
	if s.LastPromptAt != nil {
		k.add("last prompt", "%s (%s)", relTime(s.LastPromptAt.Ms, now), s.LastPromptAt.Time)
	} else {
		k.add("last prompt", "-")
	}
	k.add("events", "%d", s.EventCount)
	if s.Inherited > 0 {
		k.add("inherited", "%d", s.Inherited)
	}
	k.add("state", "%s", inspect.State(s.Blank, s.OpenTurn))
	if t := s.OpenTurn; t != nil {
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
		k.add("open turn", "%s", desc)
	}
	k.add("size", "%s (%d bytes)", humanBytes(s.SizeBytes), s.SizeBytes)
	loc := s.Location
	k.add("path", "%s", loc.Path)
	k.add("backend", "%s, %s, generation %d", loc.Backend, loc.Encoding, loc.Generation)
	if len(loc.OlderGenerations) > 0 {
		k.add("older generations", "%v", loc.OlderGenerations)
	}
	k.add("revision", "%s", s.Revision)
	if loc.TornBytes > 0 {
		k.add("torn tail", "%d bytes (never read; the next append removes it, saving the bytes to a backup)", loc.TornBytes)
	} else {
		k.add("torn tail", "none")
	}
	if loc.UncommittedBytes > 0 {
		k.add("uncommitted tail", "%d bytes (never served; the next append removes it, saving the bytes to a backup)", loc.UncommittedBytes)
	} else {
		k.add("uncommitted tail", "none")
	}
	k.add("lock", "%s", map[bool]string{true: "held by another process", false: "free"}[s.LockHeld])
	if x := s.Exact; x != nil {
		k.add("turns", "%d", x.Turns)
		for _, kind := range sortedKeys(x.TurnEnds) {
			k.add("  turn ends "+kind, "%d", x.TurnEnds[kind])
		}
		if x.FirstTime != nil {
			k.add("first event", "%s", x.FirstTime.Time)
			k.add("last event", "%s", x.LastTime.Time)
		}
		for _, typ := range sortedKeys(x.ByType) {
			k.add("  "+typ, "%d", x.ByType[typ])
		}
	}
	return k.flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

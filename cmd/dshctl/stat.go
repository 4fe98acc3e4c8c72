package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/spf13/cobra"
)

// statJSON is the stable JSON shape of `stat`.
type statJSON struct {
	ID           string            `json:"id"`
	Header       json.RawMessage   `json:"header"`
	Location     seam.Location     `json:"location"`
	SizeBytes    int64             `json:"sizeBytes"`
	EventCount   int64             `json:"eventCount"`
	Revision     string            `json:"revision"`
	CreatedAt    *timeJSON         `json:"createdAt"`
	UpdatedAt    *timeJSON         `json:"updatedAt"`
	LastPromptAt *timeJSON         `json:"lastPromptAt"`
	Blank        bool              `json:"blank"`
	OpenTurn     *inspect.OpenTurn `json:"openTurn"`
	Approximate  bool              `json:"approximate"`
	LockHeld     bool              `json:"lockHeld"`
	Inherited    int64             `json:"inheritedEventCount"`
	Exact        *exactJSON        `json:"exact,omitempty"`
}

type exactJSON struct {
	ByType    map[string]int64 `json:"byType"`
	Turns     int64            `json:"turns"`
	TurnEnds  map[string]int64 `json:"turnEnds"`
	FirstTime *timeJSON        `json:"firstTime"`
	LastTime  *timeJSON        `json:"lastTime"`
}

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
			s, err := g.resolveSession(ctx, e, args[0])
			if err != nil {
				return err
			}
			defer s.close()
			snap, err := s.svc.Stat(ctx, s.id)
			if err != nil {
				return err
			}
			h, err := s.svc.Open(ctx, s.id, seam.Read)
			if err != nil {
				return err
			}
			defer h.Close()
			var meta inspect.Meta
			var st inspect.Stats
			if exact {
				// The full scan settles what the budgeted scans may leave
				// approximate.
				if st, err = inspect.ExactStats(ctx, h); err != nil {
					return err
				}
				meta = inspect.Meta{Blank: st.Turns == 0, LastPromptAt: st.LastPromptAt,
					UpdatedAt: max(snap.Header.CreatedAt, st.LastPromptAt), OpenTurn: st.OpenTurn}
			} else if meta, err = inspect.ReadMeta(ctx, h, inspect.MetaOptions{}); err != nil {
				return err
			}
			out := statJSON{
				ID:          snap.Header.ID,
				Header:      snap.Header.AppendJSON(nil),
				Location:    snap.Location,
				SizeBytes:   snap.SizeBytes,
				EventCount:  snap.EventCount,
				Revision:    snap.Revision,
				CreatedAt:   msTime(snap.Header.CreatedAt),
				UpdatedAt:   msTime(meta.UpdatedAt),
				Blank:       meta.Blank,
				OpenTurn:    meta.OpenTurn,
				Inherited:   h.InheritedEventCount(),
				Approximate: meta.Approximate,
			}
			if meta.LastPromptAt > 0 {
				out.LastPromptAt = msTime(meta.LastPromptAt)
			}
			if p, ok := s.svc.(seam.LockProber); ok {
				if out.LockHeld, err = p.WriterActive(ctx, s.id); err != nil {
					return err
				}
			}
			if exact {
				out.Exact = &exactJSON{ByType: st.ByType, Turns: st.Turns, TurnEnds: st.TurnEnds}
				if st.Events > 0 {
					out.Exact.FirstTime, out.Exact.LastTime = msTime(st.FirstTime), msTime(st.LastTime)
				}
			}
			if format != formatTable {
				return writeJSON(e.stdout, format, out)
			}
			return printStat(e, &out, snap.Header)
		},
	}
	cmd.Flags().BoolVar(&exact, "exact", false, "also scan the whole log: counts by type, turns, first and last time")
	return cmd
}

func printStat(e *env, s *statJSON, h seam.Header) error {
	now := e.now()
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
	k.add("state", "%s", stateWord(s.Blank, s.OpenTurn))
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

// stateWord names a session's state as list and stat show it.
func stateWord(blank bool, open *inspect.OpenTurn) string {
	switch {
	case blank:
		return "blank"
	case open != nil:
		return "open turn"
	}
	return "done"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

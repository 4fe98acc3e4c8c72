package inspect

import (
	"context"

	"github.com/dshctl/dshctl/internal/rawjson"

	"github.com/dshctl/dshctl/internal/seam"
)

// Stats are the exact figures of `stat --exact`, from one full pass.
type Stats struct {
	Events int64            `json:"events"`
	ByType map[string]int64 `json:"byType"`
	// Turns counts turn/start events; TurnEnds counts turn/end events by
	// reason kind.
	Turns    int64            `json:"turns"`
	TurnEnds map[string]int64 `json:"turnEnds"`
	// FirstTime and LastTime are the times of the first and last events (0
	// for a log without events); they are not necessarily the extremes,
	// since a fork's inherited events are older than its header.
	FirstTime    int64     `json:"firstTime"`
	LastTime     int64     `json:"lastTime"`
	LastPromptAt int64     `json:"lastPromptAt,omitempty"`
	OpenTurn     *OpenTurn `json:"openTurn,omitempty"`
}

// statsCollector accumulates Stats over events fed in seq order.
type statsCollector struct {
	s    Stats
	open *OpenTurnTracker
}

// newStatsCollector returns a collector for a log of format version.
func newStatsCollector(version int) *statsCollector {
	return &statsCollector{
		s:    Stats{ByType: map[string]int64{}, TurnEnds: map[string]int64{}},
		open: NewOpenTurnTracker(version),
	}
}

// Observe feeds the next event.
func (c *statsCollector) Observe(e *seam.Event) {
	s := &c.s
	if s.Events == 0 {
		s.FirstTime = e.Time
	}
	s.Events++
	s.LastTime = e.Time
	s.ByType[e.Type]++
	switch e.Type {
	case typeTurnStart:
		s.Turns++
	case typeTurnEnd:
		// What encoding/json decodes of reason.kind: a string, or "".
		reason, _ := rawjson.Lookup(e.Data, "reason")
		kind, _ := rawjson.LookupString(reason, "kind")
		s.TurnEnds[kind]++
	case typeUserMessage:
		if isHumanPrompt(e) {
			s.LastPromptAt = e.Time
		}
	}
	c.open.Observe(e)
}

// Stats returns the figures so far; the maps are the collector's own.
func (c *statsCollector) Stats() Stats {
	s := c.s
	s.OpenTurn = c.open.OpenTurn()
	return s
}

// Meta returns the Meta of a session created at createdAt whose full scan
// gave s: every field known, nothing approximate.
func (s *Stats) Meta(createdAt int64) Meta {
	m := Meta{CreatedAt: createdAt, Blank: s.Turns == 0, BlankKnown: true,
		LastPromptAt: s.LastPromptAt, LastPromptKnown: true, OpenTurn: s.OpenTurn, OpenTurnKnown: true}
	m.settle()
	return m
}

// ExactStats reads the whole of h once and returns its Stats.
func ExactStats(ctx context.Context, h seam.Handle) (Stats, error) {
	c := newStatsCollector(h.Header().Version)
	// The collector keeps no payload: strings it keeps are copies.
	for e, err := range h.Scan(ctx, seam.ScanOptions{Transient: true}) {
		if err != nil {
			return c.Stats(), err
		}
		c.Observe(&e)
	}
	return c.Stats(), nil
}

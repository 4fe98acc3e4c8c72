package sessionview

import (
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/termui"
)

// JSON is a session as list and stat give it in JSON (stat adds fields of
// its own, see StatJSON). Every field is always present: a value
// that is unknown (the event count of a log that cannot be read) or that
// does not exist (no prompt yet, no parent) is null, never left out. Times
// are RFC 3339 strings with a …Ms twin (see termui.JSONTime).
type JSON struct {
	ID string `json:"id"`
	// State is blank, open, done or error; Error says why for error.
	State              string        `json:"state"`
	Error              *string       `json:"error"`
	Project            *string       `json:"project"`
	Version            *int          `json:"version"`
	CreatedAt          *string       `json:"createdAt"`
	CreatedAtMs        *int64        `json:"createdAtMs"`
	UpdatedAt          *string       `json:"updatedAt"`
	UpdatedAtMs        *int64        `json:"updatedAtMs"`
	UpdatedApproximate *bool         `json:"updatedApproximate"`
	LastPromptAt       *string       `json:"lastPromptAt"`
	LastPromptAtMs     *int64        `json:"lastPromptAtMs"`
	Blank              *bool         `json:"blank"`
	OpenTurn           *openTurnJSON `json:"openTurn"`
	EventCount         *int64        `json:"eventCount"`
	SizeBytes          int64         `json:"sizeBytes"`
	ParentSession      *string       `json:"parentSession"`
	Origin             *string       `json:"origin"`
	DelegationDepth    *int64        `json:"delegationDepth"`
	AgentPreset        *string       `json:"agentPreset"`
	Seeded             *bool         `json:"seeded"`
	Revision           *string       `json:"revision"`
	Location           locationJSON  `json:"location"`
}

type openTurnJSON struct {
	Turn int64 `json:"turn"`
	// Step is the open step, null when none is open.
	Step         *int64            `json:"step"`
	PendingCalls []pendingCallJSON `json:"pendingCalls"`
}

type pendingCallJSON struct {
	CallID string  `json:"callId"`
	Name   *string `json:"name"`
	Step   int64   `json:"step"`
	// CallSeq is the seq of the call's tool/call, null when it never
	// started.
	CallSeq *int64 `json:"callSeq"`
}

type locationJSON struct {
	Backend          string `json:"backend"`
	Path             string `json:"path"`
	Encoding         string `json:"encoding"`
	Generation       int    `json:"generation"`
	OlderGenerations []int  `json:"olderGenerations"`
	TornBytes        int64  `json:"tornBytes"`
	UncommittedBytes int64  `json:"uncommittedBytes"`
}

// NewJSON is the JSON of s; word words the reason it cannot be read.
func NewJSON(s *inspect.Session, word func(error) string) JSON {
	snap := &s.Snapshot
	h := &snap.Header
	loc := snap.Location
	j := JSON{
		ID:        h.ID,
		State:     s.State,
		SizeBytes: snap.SizeBytes,
		Revision:  termui.OrNull(snap.Revision),
		Location: locationJSON{Backend: loc.Backend, Path: loc.Path, Encoding: loc.Encoding, Generation: loc.Generation,
			OlderGenerations: append([]int{}, loc.OlderGenerations...), TornBytes: loc.TornBytes, UncommittedBytes: loc.UncommittedBytes},
	}
	if s.Err != nil {
		j.Error = ptr(word(s.Err))
	}
	if s.HeaderKnown {
		j.Project, j.ParentSession, j.Origin, j.AgentPreset = termui.OrNull(h.Cwd), termui.OrNull(h.ParentSession), termui.OrNull(h.Origin), termui.OrNull(h.AgentPreset)
		j.Version, j.Seeded = ptr(h.Version), ptr(h.Seeded())
		if !h.NoDelegationDepth {
			j.DelegationDepth = ptr(h.DelegationDepth)
		}
		j.CreatedAt, j.CreatedAtMs = termui.JSONTime(h.CreatedAt, true)
		j.EventCount = ptr(snap.EventCount)
		j.UpdatedAt, j.UpdatedAtMs = termui.JSONTime(s.UpdatedAt(), true)
	}
	if s.MetaKnown {
		m := &s.Meta
		j.UpdatedApproximate = ptr(m.Approximate)
		j.LastPromptAt, j.LastPromptAtMs = termui.JSONTime(m.LastPromptAt, m.LastPromptAt > 0)
		j.Blank = ptr(m.Blank)
		j.OpenTurn = newOpenTurnJSON(m.OpenTurn)
	}
	return j
}

func newOpenTurnJSON(t *inspect.OpenTurn) *openTurnJSON {
	if t == nil {
		return nil
	}
	j := &openTurnJSON{Turn: t.Turn, PendingCalls: []pendingCallJSON{}}
	if t.StepOpen {
		j.Step = ptr(t.Step)
	}
	for _, c := range t.PendingCalls {
		p := pendingCallJSON{CallID: c.CallID, Name: termui.OrNull(c.Name), Step: c.Step}
		if c.Started() {
			p.CallSeq = ptr(c.CallSeq)
		}
		j.PendingCalls = append(j.PendingCalls, p)
	}
	return j
}

// StatJSON is what stat gives in JSON: the session as list gives it, and
// what only stat reads.
type StatJSON struct {
	JSON
	LockHeld            bool       `json:"lockHeld"`
	InheritedEventCount int64      `json:"inheritedEventCount"`
	Exact               *exactJSON `json:"exact"`
}

// exactJSON is what stat --exact adds; null without it.
type exactJSON struct {
	Events int64            `json:"eventCount"`
	ByType map[string]int64 `json:"byType"`
	Turns  int64            `json:"turns"`
	// TurnEnds counts turn/end events by reason kind.
	TurnEnds       map[string]int64 `json:"turnEnds"`
	FirstEventAt   *string          `json:"firstEventAt"`
	FirstEventAtMs *int64           `json:"firstEventAtMs"`
	LastEventAt    *string          `json:"lastEventAt"`
	LastEventAtMs  *int64           `json:"lastEventAtMs"`
}

// NewStatJSON is the JSON of r; word words the reason it cannot be read.
func NewStatJSON(r *inspect.StatReport, word func(error) string) StatJSON {
	j := StatJSON{JSON: NewJSON(&r.Session, word), LockHeld: r.LockHeld, InheritedEventCount: r.Inherited}
	if x := r.Exact; x != nil {
		j.Exact = &exactJSON{Events: x.Events, ByType: x.ByType, Turns: x.Turns, TurnEnds: x.TurnEnds}
		j.Exact.FirstEventAt, j.Exact.FirstEventAtMs = termui.JSONTime(x.FirstTime, x.Events > 0)
		j.Exact.LastEventAt, j.Exact.LastEventAtMs = termui.JSONTime(x.LastTime, x.Events > 0)
	}
	return j
}

func ptr[T any](v T) *T { return &v }

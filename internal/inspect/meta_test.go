package inspect

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

func readMeta(t *testing.T, h seam.Handle, budget int64) Meta {
	t.Helper()
	m, err := ReadMeta(context.Background(), h, MetaOptions{MaxBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func prompt(seq, time int64, kind string) seam.Event {
	return ev(seq, time, "user/message",
		`{"id":"u","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"`+kind+`"}}`)
}

// turn returns the events of one completed turn n starting at seq, its
// prompt at time.
func turn(seq, time, n int64, kind string) []seam.Event {
	ns := string(rune('0' + n))
	return []seam.Event{
		ev(seq, time, "turn/start", `{"turn":`+ns+`}`),
		prompt(seq+1, time+1, kind),
		ev(seq+2, time+2, "step/start", `{"turn":`+ns+`,"step":1}`),
		ev(seq+3, time+3, "step/end", `{"turn":`+ns+`,"step":1}`),
		ev(seq+4, time+4, "turn/end", `{"turn":`+ns+`,"reason":{"kind":"completed"}}`),
	}
}

// padding returns n ignorable events of about size bytes each.
func padding(seq, time int64, n, size int) []seam.Event {
	var out []seam.Event
	for i := range n {
		e := ev(seq+int64(i), time+int64(i), "request/context", `{"pad":"`+strings.Repeat("p", size)+`"}`)
		out = append(out, e)
	}
	return out
}

func TestMetaBlank(t *testing.T) {
	cases := []struct {
		name   string
		events []seam.Event
		blank  bool
	}{
		{"header only", nil, true},
		{"only session/end-seed", []seam.Event{ev(0, 5000, "session/end-seed", `{}`)}, true},
		{"plugin events only", []seam.Event{prompt(0, 5000, "plugin"), ev(1, 5001, "session/title", `{"title":"x"}`)}, true},
		{"one turn", turn(0, 5000, 1, "user"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := readMeta(t, newFake(1000, 2, c.events...), 0)
			if m.Blank != c.blank || !m.BlankKnown || m.Approximate {
				t.Errorf("meta = %+v, want blank %v, known, exact", m, c.blank)
			}
		})
	}
}

// TestMetaTurnStartBeyondBudget: when the budget runs out before a
// turn/start is found from either end, the session is shown.
func TestMetaTurnStartBeyondBudget(t *testing.T) {
	var events []seam.Event
	events = append(events, padding(0, 2000, 50, 1000)...)
	events = append(events, turn(50, 3000, 1, "user")...)
	events = append(events, padding(55, 4000, 50, 1000)...)
	h := newFake(1000, 2, events...)
	const budget = 8 << 10
	m := readMeta(t, h, budget)
	want := Meta{CreatedAt: 1000, UpdatedAt: 1000, Approximate: true}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("meta = %+v, want %+v", m, want)
	}
	for i, n := range h.Reads {
		if n > budget {
			t.Errorf("scan %d read %d bytes, budget %d", i, n, budget)
		}
	}
	// With room for the whole log the same session is exact.
	m = readMeta(t, h, -1)
	want = Meta{CreatedAt: 1000, BlankKnown: true, LastPromptAt: 3001, LastPromptKnown: true,
		UpdatedAt: 3001, OpenTurnKnown: true}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("unbounded meta = %+v, want %+v", m, want)
	}
}

// TestMetaTurnNearTail: a turn/start past the forward budget but near the
// tail is found by the tail scan, and everything is known.
func TestMetaTurnNearTail(t *testing.T) {
	events := append(padding(0, 2000, 50, 1000), turn(50, 3000, 1, "user")...)
	m := readMeta(t, newFake(1000, 2, events...), 8<<10)
	want := Meta{CreatedAt: 1000, BlankKnown: true, LastPromptAt: 3001, LastPromptKnown: true,
		UpdatedAt: 3001, OpenTurnKnown: true}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("meta = %+v, want %+v", m, want)
	}
}

func TestMetaLastPrompt(t *testing.T) {
	var events []seam.Event
	events = append(events, turn(0, 5000, 1, "user")...)
	events = append(events, turn(5, 6000, 2, "plugin")...) // a plugin-injected prompt
	events = append(events, ev(10, 7000, "tool/result", `{"turn":2,"step":1,"message":{"id":"r","role":"user","source":{"kind":"tool","callId":"x"},"content":[]}}`))
	m := readMeta(t, newFake(1000, 2, events...), 0)
	if m.LastPromptAt != 5001 || m.UpdatedAt != 5001 || !m.LastPromptKnown {
		t.Errorf("meta = %+v, want lastPromptAt 5001 (the human prompt)", m)
	}
	// The fixture whose only prompt comes from a plugin.
	m = readMeta(t, newFake(1000, 0, fixtureEvents(t, "task_review_01___x")...), 0)
	if m.LastPromptAt != 0 || m.UpdatedAt != 1000 || !m.LastPromptKnown || m.Blank {
		t.Errorf("plugin-only meta = %+v", m)
	}
}

// TestMetaSeedMarkerKeepsUpdated: appending session/end-seed (what a resume
// writes) is no human activity.
func TestMetaSeedMarkerKeepsUpdated(t *testing.T) {
	events := fixtureEvents(t, "session-5d6e7f80-9102-4a3b-8c4d-5e6f70819203")
	h := newFake(1785331888000, 0, events...)
	before := readMeta(t, h, 0)
	last := events[len(events)-1]
	h.Events = append(h.Events, ev(last.Seq+1, last.Time+3_600_000, "session/end-seed", `{}`))
	after := readMeta(t, h, 0)
	if before.UpdatedAt != after.UpdatedAt || before.UpdatedAt <= h.Head.CreatedAt {
		t.Errorf("updated %d → %d after a seed marker", before.UpdatedAt, after.UpdatedAt)
	}
}

// TestMetaForkOrder: a fork inherits its parent's events (older than its
// header), then session/end-seed, then maybe new turns; it is ordered by its
// own last human prompt, or its creation.
func TestMetaForkOrder(t *testing.T) {
	child := fixtureEvents(t, "session-6e7f8091-0213-4b4c-9d5e-6f7081920314")
	const forkedAt = 1785331918180 // the fixture header's createdAt
	sessions := map[string]*fakeHandle{
		"parent":          newFake(1785331888000, 0, fixtureEvents(t, "session-5d6e7f80-9102-4a3b-8c4d-5e6f70819203")...),
		"fork, new turn":  newFake(forkedAt, 0, child...),
		"fork, untouched": newFake(forkedAt-5, 0, child[:20]...), // inherited events and the marker
	}
	updated := map[string]int64{}
	for name, h := range sessions {
		m := readMeta(t, h, 0)
		if m.Approximate || m.Blank {
			t.Errorf("%s: meta %+v", name, m)
		}
		updated[name] = m.UpdatedAt
	}
	if updated["fork, new turn"] != 1785331918207 {
		t.Errorf("fork updated %d, want its new prompt 1785331918207", updated["fork, new turn"])
	}
	if updated["fork, untouched"] != forkedAt-5 {
		t.Errorf("untouched fork updated %d, want its createdAt", updated["fork, untouched"])
	}
	names := []string{"parent", "fork, untouched", "fork, new turn"}
	slices.SortFunc(names, func(a, b string) int { return int(updated[b] - updated[a]) })
	if want := []string{"fork, new turn", "fork, untouched", "parent"}; !slices.Equal(names, want) {
		t.Errorf("newest first: %v, want %v", names, want)
	}
}

func TestMetaOpenTurn(t *testing.T) {
	events := fixtureEvents(t, openTailID)
	m := readMeta(t, newFake(1785331708000, 0, events...), 0)
	want := &OpenTurn{Turn: 2, Step: 1, StepOpen: true,
		PendingCalls: []PendingCall{{CallID: "call_lint_1", Name: "bash", Step: 1, CallSeq: 38}}}
	if !reflect.DeepEqual(m.OpenTurn, want) || !m.OpenTurnKnown || m.LastPromptAt != 1785331708569 {
		t.Errorf("meta = %+v, open turn %+v", m, m.OpenTurn)
	}
	// An open turn longer than the budget is not known, and not guessed.
	long := append(slices.Clone(events[:20]), padding(20, 1785331708600, 40, 1000)...)
	m = readMeta(t, newFake(1785331708000, 0, long...), 8<<10)
	if m.OpenTurn != nil || m.OpenTurnKnown || !m.Approximate || m.LastPromptKnown || m.UpdatedAt != 1785331708000 {
		t.Errorf("long open turn meta = %+v", m)
	}
}

func TestMetaScanError(t *testing.T) {
	h := newFake(1000, 2, turn(0, 5000, 1, "user")...)
	h.FailAt = 3
	m, err := ReadMeta(context.Background(), h, MetaOptions{})
	if !errors.Is(err, seam.ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	if m.Blank || !m.Approximate || m.UpdatedAt != 1000 {
		t.Errorf("meta on error = %+v, want conservative", m)
	}
}

func TestIsHumanPrompt(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{`{"source":{"kind":"user"}}`, true},
		{`{"source":{"kind":"\u0075ser"}}`, true},                       // escaped, as JSON.parse reads it
		{`{"sour\u0063e":{"kind":"user"}}`, true},                       // escaped key
		{`{"source":{"kind":"plugin"},"source":{"kind":"user"}}`, true}, // the last one wins
		{`{"source":{"kind":"user"},"source":{"kind":"plugin"}}`, false},
		{`{"Source":{"kind":"user"}}`, false}, // keys are case-sensitive, as in dsh
		{`{"source":{"Kind":"user"}}`, false},
		{`{"source":{"kind":"tool","callId":"c"}}`, false},
		{`{"toolCallId":5,"source":{"kind":"user"}}`, true}, // other members are not checked
		{`{"source":"user"}`, false},
		{`{"kind":"user"}`, false},
		{`{"source":{"kind":"user"`, false}, // not JSON
		{``, false},
	} {
		e := seam.Event{Type: "user/message", Data: []byte(c.data)}
		if got := isHumanPrompt(&e); got != c.want {
			t.Errorf("isHumanPrompt(%s) = %v, want %v", c.data, got, c.want)
		}
	}
	e := seam.Event{Type: "system/message", Data: []byte(`{"source":{"kind":"user"}}`)}
	if isHumanPrompt(&e) {
		t.Error("a system/message is a human prompt")
	}
}

// TestMetaHeadDamageReported: damage between the header and the first
// turn/start is found, though the tail alone would settle every field: the
// head is read first, as only it proves that turn/start committed.
func TestMetaHeadDamageReported(t *testing.T) {
	events := append([]seam.Event{ev(0, 1500, "session/title", `{"title":"t"}`)}, turn(1, 5000, 1, "user")...)
	h := newFake(1000, 2, events...)
	h.FailAt = 0
	if _, err := ReadMeta(context.Background(), h, MetaOptions{}); !errors.Is(err, seam.ErrCorrupt) {
		t.Fatalf("err = %v, want the head's ErrCorrupt", err)
	}
}

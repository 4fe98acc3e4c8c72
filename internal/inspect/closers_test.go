package inspect

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

const openTailID = "session-7a2b9c4d-1e3f-4a5b-8c6d-0e1f2a3b4c5d"

func track(version int, events []seam.Event) *OpenTurnTracker {
	t := NewOpenTurnTracker(version)
	for i := range events {
		t.Observe(&events[i])
	}
	return t
}

// TestClosersMatchDsh pins the closers to the ones dsh 0.1.0 produced for
// the fixture left open after a tool/call, both from a stream and from a
// handle.
func TestClosersMatchDsh(t *testing.T) {
	events := fixtureEvents(t, openTailID)
	raw, err := os.ReadFile(expectedPath(t, openTailID+".closers.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		want = append(want, jsonValue(t, []byte(line)))
	}
	fromHandle, err := Closers(context.Background(), newFake(0, 0, events...))
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]seam.Event{
		"tracker": track(0, events).Closers(),
		"handle":  fromHandle,
	} {
		var gotValues []any
		for _, e := range got {
			gotValues = append(gotValues, jsonValue(t, e.AppendJSON(nil)))
		}
		if !reflect.DeepEqual(gotValues, want) {
			t.Errorf("%s closers:\n got %v\nwant %v", name, gotValues, want)
		}
	}
	// What dsh appends must pass the writer's validation.
	if _, err := seam.PrepareBatch(openTailID, 0, int64(len(events)), fromHandle); err != nil {
		t.Errorf("closers rejected by PrepareBatch: %v", err)
	}
}

func TestOpenTurnOfFixture(t *testing.T) {
	got := track(0, fixtureEvents(t, openTailID)).OpenTurn()
	want := &OpenTurn{Turn: 2, Step: 1, StepOpen: true,
		PendingCalls: []PendingCall{{CallID: "call_lint_1", Name: "bash", Step: 1, CallSeq: 38}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OpenTurn = %+v, want %+v", got, want)
	}
}

// TestClosersDamagedCases follows the closers dsh read from the damaged
// fixtures (damaged/cases.json).
func TestClosersDamagedCases(t *testing.T) {
	t.Run("tool/call lost: TOOL_NOT_STARTED", func(t *testing.T) {
		events := fixtureEvents(t, openTailID)[:38] // the garbage line was the tool/call
		got := track(0, events).Closers()
		if len(got) != 3 {
			t.Fatalf("got %d closers, want 3", len(got))
		}
		var d struct {
			Turn, Step int64
			Message    struct {
				ID, Role string
				Source   struct{ Kind, CallID string }
				Content  []struct {
					Type, ToolCallID string
					IsError          bool
					Content          []struct{ Type, Text string }
				}
			}
			Error struct{ Name, Code string }
		}
		if err := json.Unmarshal(got[0].Data, &d); err != nil {
			t.Fatal(err)
		}
		if got[0].Type != "tool/result" || got[0].Seq != 38 || got[0].Time != events[37].Time {
			t.Errorf("closer 0 = %s seq %d time %d", got[0].Type, got[0].Seq, got[0].Time)
		}
		if got[0].SourceEventSeqs != nil {
			t.Errorf("TOOL_NOT_STARTED cites %v", got[0].SourceEventSeqs)
		}
		if d.Error.Code != CodeToolNotStarted || d.Error.Name != "ToolNotStartedError" ||
			d.Message.ID != "interrupted-tool-result-call_lint_1-38" || d.Turn != 2 || d.Step != 1 ||
			d.Message.Role != "user" || d.Message.Source.CallID != "call_lint_1" ||
			len(d.Message.Content) != 1 || !d.Message.Content[0].IsError ||
			d.Message.Content[0].Content[0].Text != notStartedText {
			t.Errorf("TOOL_NOT_STARTED closer = %s", got[0].Data)
		}
		if got[1].Type != "step/end" || got[1].Seq != 39 || got[2].Type != "turn/end" || got[2].Seq != 40 {
			t.Errorf("closers = %v", got)
		}
	})
	t.Run("torn after step/end: turn/end only", func(t *testing.T) {
		events := fixtureEvents(t, "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c")[:112]
		got := track(0, events).Closers()
		want := `{"type":"turn/end","seq":112,"time":1785331621057,"data":{"turn":3,"reason":{"kind":"interrupted"}}}`
		if len(got) != 1 || string(got[0].AppendJSON(nil)) != want {
			t.Errorf("closers = %v, want [%s]", got, want)
		}
	})
}

func TestNoClosersForClosedLogs(t *testing.T) {
	for _, id := range []string{
		"session-0a0b0c0d-0e0f-4011-8213-141516171819",
		"session-1b2c3d4e-5f60-4718-89ab-cdef01234567",
		"session-2c3d4e5f-6071-4829-9abc-def012345678",
		"session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c",
		"session-6e7f8091-0213-4b4c-9d5e-6f7081920314",
		"task_review_01___x",
	} {
		events := fixtureEvents(t, id)
		tr := track(0, events)
		if c := tr.Closers(); c != nil {
			t.Errorf("%s: closers %v", id, c)
		}
		if o := tr.OpenTurn(); o != nil {
			t.Errorf("%s: open turn %+v", id, o)
		}
		c, err := Closers(context.Background(), newFake(0, 0, events...))
		if err != nil || c != nil {
			t.Errorf("%s: Closers = %v, %v", id, c, err)
		}
	}
}

// TestClosersFold pins the recovery fold rule by rule.
func TestClosersFold(t *testing.T) {
	calls := `{"turn":1,"step":2,"message":{"id":"m","role":"assistant","content":[` +
		`{"type":"text","text":"x"},{"type":"tool-call","id":"a","name":"read","arguments":"{}"},` +
		`{"type":"tool-call","id":"b","name":"bash","arguments":"{}"},` +
		`{"type":"tool-call","id":"c","name":"grep","arguments":"{}"}]}}`
	result := func(id string) string {
		return `{"turn":1,"step":2,"message":{"id":"r","role":"user","source":{"kind":"tool","callId":"` + id +
			`"},"content":[{"type":"tool-result","toolCallId":"` + id + `","content":[]}]}}`
	}
	head := []seam.Event{
		ev(0, 10, "turn/start", `{"turn":1}`),
		ev(1, 11, "user/message", `{"id":"u","role":"user","content":[],"source":{"kind":"user"}}`),
		ev(2, 12, "step/start", `{"turn":1,"step":1}`),
		ev(3, 13, "step/end", `{"turn":1,"step":1}`),
		ev(4, 14, "step/start", `{"turn":1,"step":2}`),
		ev(5, 15, "assistant/message", calls),
		ev(6, 16, "tool/call", `{"turn":1,"step":2,"callId":"b","name":"bash","arguments":"{}"}`),
		ev(7, 17, "tool/call", `{"turn":1,"step":2,"callId":"a","name":"read","arguments":"{}"}`),
		ev(8, 18, "tool/result", result("a")),
	}
	type closer struct {
		typ  string
		seq  int64
		code string
		cite []int64
	}
	summarize := func(es []seam.Event) []closer {
		var out []closer
		for _, e := range es {
			var d struct{ Error struct{ Code string } }
			_ = json.Unmarshal(e.Data, &d)
			if e.Time != es[0].Time {
				t.Errorf("closer times differ: %v", es)
			}
			out = append(out, closer{e.Type, e.Seq, d.Error.Code, e.SourceEventSeqs})
		}
		return out
	}
	cases := []struct {
		name   string
		events []seam.Event
		want   []closer
	}{
		{"empty log", nil, nil},
		{"requested order, started ones cited", head, []closer{
			{"tool/result", 9, CodeToolOutcomeUnknown, []int64{6}},
			{"tool/result", 10, CodeToolNotStarted, nil},
			{"step/end", 11, "", nil},
			{"turn/end", 12, "", nil},
		}},
		{"step/end forgets calls", append(head[:9:9], ev(9, 19, "step/end", `{"turn":1,"step":2}`)), []closer{
			{"turn/end", 10, "", nil},
		}},
		{"turn/end closes all", append(head[:9:9], ev(9, 19, "turn/end", `{"turn":1,"reason":{"kind":"error"}}`)), nil},
		{"a later turn/start forgets calls", append(head[:9:9], ev(9, 19, "turn/start", `{"turn":2}`)), []closer{
			{"turn/end", 10, "", nil},
		}},
		{"unrelated tail events move seq and time", append(head[:9:9],
			ev(9, 19, "tool/result", result("b")), ev(10, 20, "tool/result", result("c")),
			ev(11, 25, "todo/write", `{"todos":[]}`)), []closer{
			{"step/end", 12, "", nil},
			{"turn/end", 13, "", nil},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := track(0, c.events).Closers()
			if s := summarize(got); !reflect.DeepEqual(s, c.want) {
				t.Errorf("closers = %+v, want %+v", s, c.want)
			}
			if len(got) > 0 && got[0].Time != c.events[len(c.events)-1].Time {
				t.Errorf("closer time %d, want the last event's %d", got[0].Time, c.events[len(c.events)-1].Time)
			}
		})
	}
}

// TestClosersV4Shape checks the v4 tool message shape of the synthetic
// results and that a v4 writer would accept them.
func TestClosersV4Shape(t *testing.T) {
	events := []seam.Event{
		ev(0, 10, "turn/start", `{"turn":7}`),
		ev(1, 11, "step/start", `{"turn":7,"step":1}`),
		ev(2, 12, "assistant/message", `{"turn":7,"step":1,"message":{"id":"m","role":"assistant","content":[`+
			`{"type":"tool-call","id":"k<&>","name":"bash","arguments":"{}"},{"type":"tool-call","id":"done","name":"ls","arguments":"{}"}]}}`),
		ev(3, 13, "tool/call", `{"turn":7,"step":1,"callId":"k<&>","name":"bash","arguments":"{}"}`),
		ev(4, 14, "tool/call", `{"turn":7,"step":1,"callId":"done","name":"ls","arguments":"{}"}`),
		ev(5, 15, "tool/result", `{"turn":7,"step":1,"message":{"id":"r","role":"tool","toolCallId":"done","source":{"kind":"tool","callId":"done"},"content":[]}}`),
	}
	got := track(4, events).Closers()
	if len(got) != 3 {
		t.Fatalf("closers = %v", got)
	}
	want := jsonValue(t, []byte(`{"turn":7,"step":1,"message":{"id":"interrupted-tool-result-k<&>-6","role":"tool",`+
		`"toolCallId":"k<&>","isError":true,"source":{"kind":"tool","callId":"k<&>"},`+
		`"content":[{"type":"text","text":"`+outcomeUnknownText+`"}]},`+
		`"error":{"name":"ToolOutcomeUnknownError","code":"TOOL_OUTCOME_UNKNOWN"}}`))
	if g := jsonValue(t, got[0].Data); !reflect.DeepEqual(g, want) {
		t.Errorf("v4 result data:\n got %v\nwant %v", g, want)
	}
	if !reflect.DeepEqual(got[0].SourceEventSeqs, []int64{3}) {
		t.Errorf("cites %v, want [3]", got[0].SourceEventSeqs)
	}
	if _, err := seam.PrepareBatch("s", 4, 6, got); err != nil {
		t.Errorf("PrepareBatch: %v", err)
	}
}

func TestClosersFromHandleErrors(t *testing.T) {
	events := fixtureEvents(t, openTailID)
	for _, failAt := range []int64{37, 19} { // in the reverse walk, then in the forward read of turn 2
		h := newFake(0, 0, events...)
		h.FailAt = failAt
		if c, err := Closers(context.Background(), h); err == nil || c != nil {
			t.Errorf("fail at %d: Closers = %v, %v", failAt, c, err)
		}
	}
	// A log with no turn boundary at all needs nothing.
	c, err := Closers(context.Background(), newFake(0, 0, ev(0, 1, "session/end-seed", `{}`)))
	if err != nil || c != nil {
		t.Errorf("Closers = %v, %v", c, err)
	}
}

// TestV4ResultByToolCallID: a v4 tool message names its call by toolCallId
// even without a source callId.
func TestV4ResultByToolCallID(t *testing.T) {
	events := []seam.Event{
		ev(0, 1, "turn/start", `{"turn":1}`),
		ev(1, 2, "assistant/message", `{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":"c","name":"x","arguments":"{}"}]}}`),
		ev(2, 3, "tool/result", `{"turn":1,"step":1,"message":{"role":"tool","toolCallId":"c","content":[]}}`),
	}
	if o := track(4, events).OpenTurn(); o == nil || len(o.PendingCalls) != 0 {
		t.Errorf("open turn %+v, want no pending call", o)
	}
}

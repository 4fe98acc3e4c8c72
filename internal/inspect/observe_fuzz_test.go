package inspect

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// refTracker is OpenTurnTracker as it was with encoding/json decoding
// every payload into structs: the reference the member-by-member reads
// must agree with.
type refTracker struct{ OpenTurnTracker }

func (t *refTracker) Observe(e *seam.Event) {
	t.seen, t.lastSeq, t.lastTime = true, e.Seq, e.Time
	switch e.Type {
	case typeTurnStart:
		var d turnStep
		_ = json.Unmarshal(e.Data, &d)
		t.open, t.turn, t.stepOpen, t.pending = true, d.Turn, false, t.pending[:0]
	case typeTurnEnd:
		t.open, t.stepOpen, t.pending = false, false, t.pending[:0]
	case typeStepStart:
		var d turnStep
		if json.Unmarshal(e.Data, &d) == nil {
			t.step, t.stepOpen = d.Step, true
		}
	case typeStepEnd:
		t.stepOpen, t.pending = false, t.pending[:0]
	case typeAssistantMessage:
		var d struct {
			Step    int64 `json:"step"`
			Message struct {
				Content []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
					Name string `json:"name"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			return
		}
		for _, b := range d.Message.Content {
			if b.Type != "tool-call" {
				continue
			}
			if i := t.find(b.ID); i >= 0 {
				t.pending[i].Step, t.pending[i].Name = d.Step, b.Name
			} else {
				t.pending = append(t.pending, PendingCall{CallID: b.ID, Name: b.Name, Step: d.Step, CallSeq: -1})
			}
		}
	case typeToolCall:
		var d toolCallPayload
		if json.Unmarshal(e.Data, &d) == nil {
			if i := t.find(d.CallID); i >= 0 {
				t.pending[i].CallSeq = e.Seq
			}
		}
	case typeToolResult:
		var d struct {
			Message msgHead `json:"message"`
		}
		if json.Unmarshal(e.Data, &d) == nil {
			if i := t.find(d.Message.callID()); i >= 0 {
				t.pending = append(t.pending[:i], t.pending[i+1:]...)
			}
		}
	}
}

// refTurnEndKind is what stat --exact counted a turn/end under.
func refTurnEndKind(data []byte) string {
	var d turnEnd
	_ = json.Unmarshal(data, &d)
	return d.Reason.Kind
}

// isObject reports whether raw is a JSON object.
func isObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

// payloadKeys are the member names the tracker reads.
var payloadKeys = []string{"turn", "step", "message", "content", "type", "id", "name", "callId",
	"arguments", "toolCallId", "source", "kind", "plugin", "reason"}

// foldedKey reports whether data holds keys that encoding/json reads
// otherwise than dsh's JSON.parse (which the tracker follows): a key that
// matches one of payloadKeys only by encoding/json's case-insensitive
// rule, or a key repeated in an object (encoding/json decodes every
// occurrence and fails on a bad one that a later one overrides).
func foldedKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []bool // true in an object, where the next string is a key
	var seen []map[string]bool
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, true)
				seen = append(seen, map[string]bool{})
				expectKey = true
				continue
			case '[':
				stack = append(stack, false)
				seen = append(seen, nil)
			default:
				stack = stack[:len(stack)-1]
				seen = seen[:len(seen)-1]
			}
		case string:
			if expectKey {
				for _, k := range payloadKeys {
					if v != k && strings.EqualFold(v, k) {
						return true
					}
				}
				if m := seen[len(seen)-1]; m[v] {
					return true
				} else {
					m[v] = true
				}
				expectKey = false
				continue
			}
		}
		expectKey = len(stack) > 0 && stack[len(stack)-1]
	}
}

// realNumber reports whether data holds a number with a fraction or an
// exponent, which dsh's JSON.parse reads as the integer it may be (1.0 is
// 1), as the tracker does, and encoding/json refuses for an int64.
func realNumber(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok && strings.ContainsAny(string(n), ".eE") {
			return true
		}
	}
}

var observeTypes = []string{typeTurnStart, typeTurnEnd, typeStepStart, typeStepEnd,
	typeAssistantMessage, typeToolCall, typeToolResult, typeUserMessage}

// FuzzObserve feeds the same events to the tracker and to refTracker and
// checks that they agree on the open turn and the closers after each, and
// that stat's turn/end kinds and the prompt check agree with encoding/json.
// Each line of the input is an event: a type selector byte, then the
// payload; payloads that are not JSON objects are dropped (readers never
// serve them).
func FuzzObserve(f *testing.F) {
	f.Add([]byte("0{\"turn\":2}\n2{\"turn\":2,\"step\":1}\n" +
		`4{"turn":2,"step":1,"message":{"content":[{"type":"tool-call","id":"c1","name":"bash"},{"type":"text","text":"x"}]}}` + "\n" +
		`5{"turn":2,"step":1,"callId":"c1","name":"bash","arguments":"{}"}` + "\n" +
		`6{"turn":2,"step":1,"message":{"source":{"kind":"tool","callId":"c1"},"content":[]}}` + "\n"))
	f.Add([]byte(`0{"turn":"x"}` + "\n" + `4{"step":"1","message":{"content":[{"type":"tool-call","id":"c"}]}}` + "\n" +
		`4{"step":3,"message":{"content":[null,{"type":"tool-call","id":"c\u0031","name":null}]}}` + "\n" +
		`6{"message":{"toolCallId":"c1","source":null}}` + "\n" + `1{"reason":{"kind":"aborted"}}` + "\n" +
		`7{"source":{"kind":"user"}}` + "\n" + `7{"source":{"kind":"us\u0065r","kind":"tool"}}` + "\n"))
	f.Add([]byte(`4{"message":{"content":[{"type":"tool-call","id":"a"},{"type":1}]}}` + "\n" + `6{"message":"x"}` + "\n" +
		`4{"message":{"content":{}}}` + "\n" + `5{"callId":"a","arguments":2}` + "\n" + `2{"step":1.5}` + "\n" + `1{"reason":"x"}`))
	f.Add([]byte(`0{"turn":1}` + "\n" + `4{"step":1,"message":{"content":[{"type":"tool-call","id":"c"}]}}` + "\n" + `6{"step":"x","message":{"toolCallId":"c"}}` + "\n" +
		`4{"step":1,"message":{"content":[{"type":"tool-call","id":"d"}]}}` + "\n" + `5{"turn":"x","callId":"d"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, want := NewOpenTurnTracker(4), &refTracker{*NewOpenTurnTracker(4)}
		for i, line := range bytes.Split(in, []byte("\n")) {
			if len(line) < 2 || !json.Valid(line[1:]) || !isObject(line[1:]) || foldedKey(line[1:]) || realNumber(line[1:]) {
				continue
			}
			e := seam.Event{Type: observeTypes[int(line[0])%len(observeTypes)], Seq: int64(i), Time: int64(i), Data: line[1:]}
			got.Observe(&e)
			want.Observe(&e)
			if g, w := got.OpenTurn(), want.OpenTurn(); !reflect.DeepEqual(g, w) {
				t.Fatalf("after %s %s: open turn %+v, encoding/json gives %+v", e.Type, e.Data, g, w)
			}
			if g, w := got.Closers(), want.Closers(); !reflect.DeepEqual(g, w) {
				t.Fatalf("after %s %s: closers %+v, encoding/json gives %+v", e.Type, e.Data, g, w)
			}
			c := newStatsCollector(4)
			c.Observe(&seam.Event{Type: typeTurnEnd, Data: e.Data})
			if _, ok := c.s.TurnEnds[refTurnEndKind(e.Data)]; !ok {
				t.Fatalf("turn/end %s counted as %v, encoding/json reads kind %q", e.Data, c.s.TurnEnds, refTurnEndKind(e.Data))
			}
			var m struct {
				Source struct {
					Kind string `json:"kind"`
				} `json:"source"`
			}
			e.Type = typeUserMessage
			if json.Unmarshal(e.Data, &m) == nil && bytes.IndexByte(e.Data, '\\') < 0 && isHumanPrompt(&e) != (m.Source.Kind == "user") {
				t.Fatalf("prompt check of %s: %v", e.Data, isHumanPrompt(&e))
			}
		}
	})
}

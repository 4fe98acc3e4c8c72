package seam

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestPrepareBatch(t *testing.T) {
	ev := func(seq int64, typ, data string) Event {
		return Event{Type: typ, Seq: seq, Time: 1785331618000 + seq, Data: json.RawMessage(data)}
	}
	user := ev(5, "user/message", "{ \"content\" : [ ] ,\n \"source\":{\"kind\":\"user\"} }")
	user.SurfaceOp = json.RawMessage(` "append" `)
	result := ev(6, "tool/result", `{"turn":1}`)
	result.SurfaceOp = json.RawMessage(`"append"`)
	result.SourceEventSeqs = []int64{4}
	in := []Event{user, result}
	out, err := PrepareBatch("s1", 4, 5, in)
	if err != nil {
		t.Fatal(err)
	}
	if string(out[0].Data) != `{"content":[],"source":{"kind":"user"}}` || string(out[0].SurfaceOp) != `"append"` {
		t.Fatalf("not canonical: %s %s", out[0].Data, out[0].SurfaceOp)
	}
	out[1].SourceEventSeqs[0] = 99
	if in[1].SourceEventSeqs[0] != 4 {
		t.Fatal("PrepareBatch shares sourceEventSeqs with its input")
	}
	if got, err := PrepareBatch("s1", 4, 5, nil); err != nil || len(got) != 0 {
		t.Fatalf("empty batch: %v, %v", got, err)
	}

	for _, c := range []struct {
		name  string
		v     int
		batch []Event
		kind  error
		msg   string
	}{
		{"seq_ahead", 4, []Event{ev(6, "turn/start", `{}`)}, ErrSeqMismatch, `append seq mismatch for "s1": expected 5 at index 0, got 6`},
		{"seq_behind", 4, []Event{ev(4, "turn/start", `{}`)}, ErrSeqMismatch, `append seq mismatch for "s1": expected 5 at index 0, got 4`},
		{"seq_hole", 4, []Event{ev(5, "turn/start", `{}`), ev(6, "turn/end", `{}`), ev(8, "turn/start", `{}`)}, ErrSeqMismatch, `append seq mismatch for "s1": expected 7 at index 2, got 8`},
		{"invalid_json", 4, []Event{ev(5, "turn/start", `{"turn":`)}, ErrInvalid, ""},
		{"nan", 4, []Event{ev(5, "turn/start", `{"x":NaN}`)}, ErrInvalid, ""},
		{"infinity", 4, []Event{ev(5, "turn/start", `{"x":-Infinity}`)}, ErrInvalid, ""},
		{"nil_data", 4, []Event{ev(5, "turn/start", ``)}, ErrInvalid, ""},
		{"array_data", 4, []Event{ev(5, "turn/start", `[]`)}, ErrInvalid, ""},
		{"second_invalid", 4, []Event{ev(5, "turn/start", `{}`), ev(6, "turn/end", `{`)}, ErrInvalid, ""},
		{"surfaceOp_invalid_json", 4, []Event{{Type: "user/message", Seq: 5, Data: json.RawMessage(`{}`), SurfaceOp: json.RawMessage(`"app`)}}, ErrInvalid, ""},
		{"surfaceOp_missing", 4, []Event{ev(5, "user/message", `{}`)}, ErrInvalid, ""},
		{"surfaceOp_old_replace_in_v4", 4, []Event{{Type: "user/message", Seq: 5, Data: json.RawMessage(`{}`), SurfaceOp: json.RawMessage(`{"op":"replace","start":1,"end":2}`)}}, ErrInvalid, ""},
		{"source_not_below", 4, []Event{{Type: "tool/call", Seq: 5, Data: json.RawMessage(`{}`), SourceEventSeqs: []int64{5}}}, ErrInvalid, ""},
		{"unknown_type", 4, []Event{ev(5, "plugin/x", `{}`)}, ErrInvalid, ""},
		{"chunk_in_v4", 4, []Event{ev(5, "assistant/chunk", `{}`)}, ErrInvalid, ""},
		{"packed_kind", 0, []Event{{Type: "text-chunks", Seq: 5, Data: json.RawMessage(`{}`), Ignorable: true}}, ErrInvalid, ""},
		{"unsafe_time", 4, []Event{{Type: "turn/start", Seq: 5, Time: 1 << 60, Data: json.RawMessage(`{}`)}}, ErrInvalid, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := PrepareBatch("s1", c.v, 5, c.batch)
			if !errors.Is(err, c.kind) || out != nil {
				t.Fatalf("PrepareBatch: %v, %v; want %v", out, err, c.kind)
			}
			var e *Error
			if !errors.As(err, &e) || e.ID != "s1" || e.Op != "append" {
				t.Fatalf("PrepareBatch: %#v does not name the session and op", err)
			}
			if c.msg != "" && err.Error() != c.msg {
				t.Fatalf("message %q, want %q", err.Error(), c.msg)
			}
			if c.kind == ErrInvalid && errors.Is(err, ErrCorrupt) {
				t.Fatalf("%v is also ErrCorrupt", err)
			}
		})
	}
	ignorable := ev(5, "plugin/x", `{}`)
	ignorable.Ignorable = true
	if out, err := PrepareBatch("s1", 4, 5, []Event{ignorable}); err != nil || !slices.EqualFunc(out, []Event{ignorable}, func(a, b Event) bool {
		return string(a.AppendJSON(nil)) == string(b.AppendJSON(nil))
	}) {
		t.Fatalf("ignorable unknown type: %v, %v", out, err)
	}
}

// TestPrepareBatchKeepsEmptySourceSeqs checks that an empty sourceEventSeqs
// list stays present: [] and an absent list are different events.
func TestPrepareBatchKeepsEmptySourceSeqs(t *testing.T) {
	out, err := PrepareBatch("s", 4, 0, []Event{
		{Type: "turn/start", Seq: 0, Time: 1, Data: []byte(`{"turn":1}`), SourceEventSeqs: []int64{}},
		{Type: "turn/start", Seq: 1, Time: 1, Data: []byte(`{"turn":1}`)},
	})
	if err != nil || out[0].SourceEventSeqs == nil || out[1].SourceEventSeqs != nil {
		t.Fatalf("PrepareBatch: %v, %v %v", err, out[0].SourceEventSeqs, out[1].SourceEventSeqs)
	}
}

// TestPrepareEvent: the bare reason of each refusal, with no seq check, and
// the canonical form of an accepted event.
func TestPrepareEvent(t *testing.T) {
	for _, c := range []struct {
		e    Event
		want string // "" when accepted
	}{
		{Event{Type: "session/title", Seq: 9, Data: json.RawMessage(`{ "title" : "t" }`)}, ""},
		{Event{Type: "session/title", Data: json.RawMessage(`[1]`)}, "data of session/title is not a JSON object"},
		{Event{Type: "user/message", Data: json.RawMessage(`{}`)}, "user/message without surfaceOp"},
		{Event{Type: "user/message", Data: json.RawMessage(`{}`), SurfaceOp: json.RawMessage(`{"op":`)}, "surfaceOp is not valid JSON"},
		{Event{Type: "mystery/event", Data: json.RawMessage(`{}`)}, `event type "mystery/event" unknown to format v4`},
		{Event{Type: "mystery/event", Data: json.RawMessage(`{}`), Ignorable: true}, ""},
	} {
		got, err := PrepareEvent(c.e, 4)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("PrepareEvent(%s): %v", c.e.Type, err)
		case c.want == "" && got.Seq != c.e.Seq && !json.Valid(got.Data):
			t.Errorf("PrepareEvent(%s) = %+v", c.e.Type, got)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("PrepareEvent(%s %s): %v, want %q", c.e.Type, c.e.Data, err, c.want)
		}
	}
	got, _ := PrepareEvent(Event{Type: "session/title", Data: json.RawMessage(`{ "title" : "t" }`)}, 4)
	if string(got.Data) != `{"title":"t"}` {
		t.Errorf("not canonical: %s", got.Data)
	}
}

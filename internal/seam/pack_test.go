package seam

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// chunk returns an assistant/chunk event as dsh writes it.
func chunk(seq, time int64, kind, part string) Event {
	var data string
	switch kind {
	case "text":
		data = fmt.Sprintf(`{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":%s}}`, rawjson.AppendString(nil, part))
	case "reasoning":
		data = fmt.Sprintf(`{"turn":1,"step":2,"chunk":{"type":"reasoning-delta","index":0,"text":%s}}`, rawjson.AppendString(nil, part))
	case "tool":
		data = fmt.Sprintf(`{"turn":1,"step":2,"chunk":{"type":"tool-call-delta","index":1,"id":"call_1","argumentsDelta":%s}}`, rawjson.AppendString(nil, part))
	case "tool-named":
		data = fmt.Sprintf(`{"turn":1,"step":2,"chunk":{"type":"tool-call-delta","index":1,"id":"call_1","name":"bash","argumentsDelta":%s}}`, rawjson.AppendString(nil, part))
	default:
		data = kind // raw data
	}
	return Event{Type: "assistant/chunk", Seq: seq, Time: time, Data: []byte(data)}
}

// expandRecords returns the logical events of records and checks that each
// packed row's payload decodes back to the same row within the limits.
func expandRecords(t *testing.T, recs []Record, maxMembers, maxPayload int) []Event {
	t.Helper()
	var out []Event
	for _, r := range recs {
		if p := r.Packed; p != nil {
			payload := p.AppendPayloadJSON(nil)
			if len(p.Parts) < minPackedMembers || len(p.Parts) > maxMembers || len(payload) > maxPayload {
				t.Fatalf("packed row of %d members, %d payload bytes; limits %d, %d", len(p.Parts), len(payload), maxMembers, maxPayload)
			}
			back, err := DecodePacked(p.Kind, p.Seq0, p.Time0, payload)
			if err != nil {
				t.Fatalf("DecodePacked(%s): %v", payload, err)
			}
			if !bytes.Equal(back.AppendPayloadJSON(nil), payload) {
				t.Fatalf("payload round trip: %s", payload)
			}
		}
		out = append(out, r.Events()...)
	}
	return out
}

func TestPackChunks(t *testing.T) {
	plain := Event{Type: "step/start", Seq: 0, Time: 10, Data: []byte(`{"turn":1,"step":2}`)}
	seqs := func(events ...Event) []Event {
		for i := range events {
			events[i].Seq = int64(i)
		}
		return events
	}
	long := strings.Repeat("x", 300<<10)
	for _, c := range []struct {
		name   string
		events []Event
		shape  string // per record: P<n> for a packed row of n members, E for an event
		max    int    // payload limit; 0 means MaxPackedPayload
	}{
		{"run_of_five", seqs(plain, chunk(0, 11, "text", "Hel"), chunk(0, 12, "text", "lo"), chunk(0, 15, "text", " wor"), chunk(0, 15, "text", "ld"), chunk(0, 20, "text", "!")), "E P5", 0},
		{"run_of_two_stays_plain", seqs(chunk(0, 1, "text", "a"), chunk(0, 2, "text", "b"), plain), "E E E", 0},
		{"negative_gaps", seqs(chunk(0, 100, "reasoning", "a"), chunk(0, 90, "reasoning", "b"), chunk(0, 95, "reasoning", "c")), "P3", 0},
		{"kinds_split", seqs(chunk(0, 1, "reasoning", "a"), chunk(0, 1, "reasoning", "b"), chunk(0, 1, "reasoning", "c"), chunk(0, 1, "text", "d"), chunk(0, 1, "text", "e"), chunk(0, 1, "text", "f")), "P3 P3", 0},
		{"tool_name_presence_splits", seqs(chunk(0, 1, "tool-named", ""), chunk(0, 2, "tool", "{\"p"), chunk(0, 3, "tool", "ath\":"), chunk(0, 4, "tool", "\"x\"}")), "E P3", 0},
		{"named_tool_run", seqs(chunk(0, 1, "tool-named", "{"), chunk(0, 2, "tool-named", "}"), chunk(0, 3, "tool-named", "")), "P3", 0},
		{"unicode_and_escapes", seqs(chunk(0, 1, "text", "café ☕"), chunk(0, 2, "text", "line\n\t\"q\""), chunk(0, 3, "text", "🚀\u2028"), chunk(0, 3, "text", "\x01")), "P4", 0},
		{"non_canonical_escape_not_packed", seqs(chunk(0, 1, "text", "a"), chunk(0, 2, `{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"caf\u00e9"}}`, ""), chunk(0, 3, "text", "c")), "E E E", 0},
		{"other_key_order_not_packed", seqs(chunk(0, 1, `{"step":2,"turn":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}`, ""), chunk(0, 2, "text", "b"), chunk(0, 3, "text", "c"), chunk(0, 4, "text", "d")), "E P3", 0},
		{"extra_key_not_packed", seqs(chunk(0, 1, `{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"a","x":1}}`, ""), chunk(0, 2, "text", "b"), chunk(0, 3, "text", "c")), "E E E", 0},
		{"block_start_not_packed", seqs(chunk(0, 1, `{"turn":1,"step":2,"chunk":{"type":"block-start","index":0,"blockType":"text"}}`, ""), chunk(0, 2, "text", "b"), chunk(0, 3, "text", "c"), chunk(0, 4, "text", "d")), "E P3", 0},
		{"payload_limit_splits", seqs(chunk(0, 1, "text", long), chunk(0, 2, "text", long), chunk(0, 3, "text", long), chunk(0, 4, "text", long), chunk(0, 5, "text", long), chunk(0, 6, "text", long), chunk(0, 7, "text", long)), "P3 P3 E", 0},
		{"member_larger_than_limit", seqs(chunk(0, 1, "text", long), chunk(0, 2, "text", "a"), chunk(0, 3, "text", "b"), chunk(0, 4, "text", "c")), "E P3", 200 << 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			limit := c.max
			if limit == 0 {
				limit = MaxPackedPayload
			}
			recs := PackChunks(c.events, MaxPackedMembers, limit)
			var shape []string
			for _, r := range recs {
				if r.Packed != nil {
					shape = append(shape, fmt.Sprintf("P%d", len(r.Packed.Parts)))
				} else {
					shape = append(shape, "E")
				}
			}
			if got := strings.Join(shape, " "); got != c.shape {
				t.Fatalf("records %s, want %s", got, c.shape)
			}
			got := expandRecords(t, recs, MaxPackedMembers, limit)
			if len(got) != len(c.events) {
				t.Fatalf("%d events after expansion, want %d", len(got), len(c.events))
			}
			for i := range got {
				if g, w := got[i].AppendJSON(nil), c.events[i].AppendJSON(nil); !bytes.Equal(g, w) {
					t.Fatalf("event %d:\n got %s\nwant %s", i, g, w)
				}
			}
		})
	}
}

func TestPackChunksMemberLimit(t *testing.T) {
	events := make([]Event, 2*MaxPackedMembers+5)
	for i := range events {
		events[i] = chunk(int64(i), int64(1000+i*7%13), "text", fmt.Sprint(i))
	}
	recs := PackChunks(events, MaxPackedMembers, MaxPackedPayload)
	if len(recs) != 3 || len(recs[0].Packed.Parts) != MaxPackedMembers || len(recs[1].Packed.Parts) != MaxPackedMembers || len(recs[2].Packed.Parts) != 5 {
		t.Fatalf("got %d records", len(recs))
	}
	got := expandRecords(t, recs, MaxPackedMembers, MaxPackedPayload)
	for i := range got {
		if !bytes.Equal(got[i].AppendJSON(nil), events[i].AppendJSON(nil)) {
			t.Fatalf("event %d differs", i)
		}
	}
}

// TestPackChunksPayloadExact checks that the payload bound is exact: every
// row fits, and adding the next member would not have.
func TestPackChunksPayloadExact(t *testing.T) {
	const limit = 4096
	var events []Event
	for i := range 300 {
		events = append(events, chunk(int64(i), int64(i*i%17-8), "text", strings.Repeat("é", i%9)))
	}
	recs := PackChunks(events, MaxPackedMembers, limit)
	expandRecords(t, recs, MaxPackedMembers, limit)
	for i := 0; i+1 < len(recs); i++ {
		p := recs[i].Packed
		if p == nil {
			continue
		}
		next := recs[i+1].FirstSeq()
		bigger := *p
		bigger.Parts = append(append([]string(nil), p.Parts...), partOf(t, events[next]))
		bigger.DT = append(append([]int64(nil), p.DT...), events[next].Time-events[next-1].Time)
		if n := len(bigger.AppendPayloadJSON(nil)); n <= limit {
			t.Fatalf("row %d stops at %d payload bytes; with the next member %d still fits %d", i, len(p.AppendPayloadJSON(nil)), n, limit)
		}
	}
}

// partOf returns the text of a text chunk event.
func partOf(t *testing.T, e Event) string {
	m, ok := packable(&e)
	if !ok {
		t.Fatalf("event %s is not packable", e.AppendJSON(nil))
	}
	return m.part
}

func TestDecodePackedRejects(t *testing.T) {
	for _, c := range []struct{ kind, payload string }{
		{"assistant/chunk", `{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}`},
		{TextChunks, `{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a"]}`},
		{TextChunks, `{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}`},
		{TextChunks, `{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a",2]}`},
		{ToolCallChunks, `{"turn":1,"step":1,"index":0,"dt":[1],"args":["a","b"]}`},
		{TextChunks, `{"turn":1,"step":1,"index":0,"dt":[9007199254740991,9007199254740991],"texts":["a","b","c"]}`},
		{TextChunks, `[1]`},
		{TextChunks, `{"turn":1,`},
	} {
		if _, err := DecodePacked(c.kind, 3, 100, []byte(c.payload)); err == nil {
			t.Errorf("DecodePacked(%s, %s): no error", c.kind, c.payload)
		}
	}
}

package seam

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/rawjson"

	"pgregory.net/rapid"

	"github.com/dshctl/dshctl/internal/fixture"
)

func TestDecodeRecordEnvelope(t *testing.T) {
	for _, c := range []struct {
		name string
		v    int
		line string
		ok   bool
	}{
		{"minimal", 0, `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`, true},
		{"key_order_free", 4, `{"data":{"turn":1},"time":1,"seq":3,"type":"turn/start"}`, true},
		{"ignorable_true", 4, `{"type":"x/y","seq":1,"time":1,"data":{},"ignorable":true}`, true},
		{"ignorable_false", 4, `{"type":"turn/start","seq":1,"time":1,"data":{},"ignorable":false}`, true},
		{"ignorable_not_bool", 4, `{"type":"turn/start","seq":1,"time":1,"data":{},"ignorable":1}`, false},
		{"negative_time", 0, `{"type":"turn/start","seq":0,"time":-5,"data":{}}`, true},
		{"time_exponent", 0, `{"type":"turn/start","seq":0,"time":1.7e12,"data":{}}`, true},
		{"time_fraction", 0, `{"type":"turn/start","seq":0,"time":1.5,"data":{}}`, false},
		{"time_unsafe", 0, `{"type":"turn/start","seq":0,"time":9007199254740992,"data":{}}`, false},
		{"time_missing", 0, `{"type":"turn/start","seq":0,"data":{}}`, false},
		{"seq_missing", 0, `{"type":"turn/start","time":1,"data":{}}`, false},
		{"seq_negative", 0, `{"type":"turn/start","seq":-1,"time":1,"data":{}}`, false},
		{"seq_string", 0, `{"type":"turn/start","seq":"1","time":1,"data":{}}`, false},
		{"data_missing", 0, `{"type":"turn/start","seq":0,"time":1}`, false},
		{"data_array", 0, `{"type":"turn/start","seq":0,"time":1,"data":[1]}`, false},
		{"data_null", 0, `{"type":"turn/start","seq":0,"time":1,"data":null}`, false},
		{"type_missing", 0, `{"seq":0,"time":1,"data":{}}`, false},
		{"type_empty", 0, `{"type":"","seq":0,"time":1,"data":{}}`, false},
		{"type_number", 0, `{"type":1,"seq":0,"time":1,"data":{}}`, false},
		{"unknown_key", 0, `{"type":"turn/start","seq":0,"time":1,"data":{},"extra":1}`, false},
		{"not_object", 0, `[1,2]`, false},
		{"not_json", 0, `{"type":"turn/start","seq":0`, false},
		{"assistant_chunk_v0", 0, `{"type":"assistant/chunk","seq":0,"time":1,"data":{"turn":1,"step":1,"chunk":{}}}`, true},
		{"packed_row_v1", 1, `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}`, true},
		{"packed_row_v2", 2, `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}`, false},
		{"assistant_chunk_v2", 2, `{"type":"assistant/chunk","seq":0,"time":1,"data":{"turn":1,"step":1,"chunk":{}}}`, false},
		// Vocabulary is the caller's: an unknown type decodes.
		{"unknown_type", 4, `{"type":"roleplay/opened","seq":0,"time":1,"data":{}}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRecord([]byte(c.line), c.v)
			if c.ok != (err == nil) {
				t.Fatalf("DecodeRecord: %v, want ok=%v", err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeRecord: %v is not ErrCorrupt", err)
			}
		})
	}
}

// TestRecordRules checks that a record the decoder refuses matches the
// rule it breaks with errors.Is (verify's finding codes are these rules),
// whatever its message says.
func TestRecordRules(t *testing.T) {
	rules := []error{ErrRecordSyntax, ErrPackedRow, ErrSourceEventSeqs, ErrSurfaceOp}
	for _, c := range []struct {
		name string
		v    int
		line string
		rule error // nil: an envelope rule, none of the above
	}{
		{"not_json", 4, `{"type":"turn/start","seq":0`, ErrRecordSyntax},
		{"not_object", 4, `[1,2]`, ErrRecordSyntax},
		{"packed_row_v2", 2, `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}`, ErrPackedRow},
		{"packed_row_bad_data", 1, `{"type":"text-chunks","seq0":0,"time0":1,"data":[]}`, ErrPackedRow},
		{"packed_kind_as_event", 4, `{"type":"tool-call-chunks","seq":0,"time":1,"data":{}}`, ErrPackedRow},
		{"source_seqs_not_array", 4, `{"type":"turn/start","seq":5,"time":1,"data":{},"sourceEventSeqs":1}`, ErrSourceEventSeqs},
		{"source_seqs_not_below", 0, `{"type":"turn/start","seq":5,"time":1,"data":{},"sourceEventSeqs":[5]}`, ErrSourceEventSeqs},
		{"surface_op_missing", 4, `{"type":"user/message","seq":1,"time":1,"data":{}}`, ErrSurfaceOp},
		{"surface_op_bad", 4, `{"type":"user/message","seq":1,"time":1,"data":{},"surfaceOp":"x"}`, ErrSurfaceOp},
		{"surface_op_on_other", 4, `{"type":"turn/start","seq":1,"time":1,"data":{},"surfaceOp":"append"}`, ErrSurfaceOp},
		// Words in a value are not a rule.
		{"unknown_key_named_like_a_rule", 4, `{"type":"turn/start","seq":0,"time":1,"data":{},"surfaceOpX":1}`, nil},
		{"seq_that_reads_like_a_rule", 4, `{"type":"turn/start","seq":"packed row sourceEventSeqs","time":1,"data":{}}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRecord([]byte(c.line), c.v)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeRecord: %v, want ErrCorrupt", err)
			}
			for _, r := range rules {
				if errors.Is(err, r) != (r == c.rule) {
					t.Errorf("DecodeRecord: %v: errors.Is(%v) = %v", err, r, !(r == c.rule))
				}
			}
		})
	}
}

func TestDecodeRecordValues(t *testing.T) {
	r, err := DecodeRecord([]byte(`{ "type" : "tool/result", "seq":7, "time":1e3, "data": { "a" : [1, 2] },
		"ignorable": true, "sourceEventSeqs":[[2,4],6], "surfaceOp": { "op":"replace", "startSeq":1, "endSeq":3 } }`), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Type: "tool/result", Seq: 7, Time: 1000, Data: json.RawMessage(`{"a":[1,2]}`), Ignorable: true,
		SurfaceOp: json.RawMessage(`{"op":"replace","startSeq":1,"endSeq":3}`), SourceEventSeqs: []int64{2, 3, 4, 6}}
	if r.Packed != nil || !reflect.DeepEqual(r.Event, want) {
		t.Fatalf("DecodeRecord:\n got %+v\nwant %+v", r.Event, want)
	}
	if r.FirstSeq() != 7 || r.NextSeq() != 8 || len(r.Events()) != 1 {
		t.Fatalf("FirstSeq %d, NextSeq %d, Events %d", r.FirstSeq(), r.NextSeq(), len(r.Events()))
	}
}

func TestSurfaceOp(t *testing.T) {
	const old = `{"op":"replace","start":1,"end":3}`
	const cur = `{"op":"replace","startSeq":1,"endSeq":3}`
	for _, c := range []struct {
		name, typ, op string // op "" means absent
		okByVersion   [MaxVersion + 1]bool
	}{
		{"append_on_user", "user/message", `"append"`, [5]bool{true, true, true, true, true}},
		{"append_on_assistant", "assistant/message", `"append"`, [5]bool{true, true, true, true, true}},
		{"append_on_result", "tool/result", `"append"`, [5]bool{true, true, true, true, true}},
		{"missing_on_user", "user/message", ``, [5]bool{}},
		{"missing_on_result", "tool/result", ``, [5]bool{}},
		{"old_replace", "user/message", old, [5]bool{true, true, true, false, false}},
		{"new_replace", "user/message", cur, [5]bool{false, false, false, true, true}},
		{"on_turn_start", "turn/start", `"append"`, [5]bool{}},
		{"absent_on_turn_start", "turn/start", ``, [5]bool{true, true, true, true, true}},
		// system/message is a surface event from v3; before, it is unknown
		// to the vocabulary, so no rule binds it.
		{"system_with_op", "system/message", `"append"`, [5]bool{true, true, true, true, true}},
		{"system_without_op", "system/message", ``, [5]bool{true, true, true, false, false}},
		{"unknown_type_with_op", "plugin/thing", `"append"`, [5]bool{true, true, true, true, true}},
		{"bad_string", "user/message", `"prepend"`, [5]bool{}},
		{"bad_op", "user/message", `{"op":"insert","start":1,"end":3}`, [5]bool{}},
		{"extra_key", "user/message", `{"op":"replace","start":1,"end":3,"x":1}`, [5]bool{}},
		{"mixed_keys", "user/message", `{"op":"replace","start":1,"endSeq":3}`, [5]bool{}},
		{"end_before_start", "user/message", `{"op":"replace","start":3,"end":1}`, [5]bool{false, false, false, false, false}},
		{"negative_start", "user/message", `{"op":"replace","start":-1,"end":1}`, [5]bool{}},
		{"end_after_event", "user/message", `{"op":"replace","start":1,"end":11}`, [5]bool{}},
		{"fraction", "user/message", `{"op":"replace","start":1.5,"end":3}`, [5]bool{}},
		{"null", "user/message", `null`, [5]bool{}},
	} {
		for v := 0; v <= MaxVersion; v++ {
			t.Run(fmt.Sprintf("%s/v%d", c.name, v), func(t *testing.T) {
				line := `{"type":"` + c.typ + `","seq":10,"time":1,"data":{}`
				if c.op != "" {
					line += `,"surfaceOp":` + c.op
				}
				_, err := DecodeRecord([]byte(line+"}"), v)
				if c.okByVersion[v] != (err == nil) {
					t.Fatalf("DecodeRecord(%s, v%d): %v, want ok=%v", line, v, err, c.okByVersion[v])
				}
			})
		}
	}
}

func TestSourceEventSeqs(t *testing.T) {
	for _, c := range []struct {
		name   string
		v      int
		stored string
		want   []int64 // nil: rejected
	}{
		{"compaction_order_kept", 0, `[40,41,1,18,22,37]`, []int64{40, 41, 1, 18, 22, 37}},
		{"compaction_order_kept_v4", 4, `[40,41,1,18,22,37]`, []int64{40, 41, 1, 18, 22, 37}},
		{"empty", 0, `[]`, []int64{}},
		{"ranges_v2", 2, `[[3,6],9,11,12]`, []int64{3, 4, 5, 6, 9, 11, 12}},
		{"ranges_v4_two_runs", 4, `[[0,2],[5,9]]`, []int64{0, 1, 2, 5, 6, 7, 8, 9}},
		{"single_point_range", 4, `[[3,3]]`, []int64{3}},
		{"range_in_v0", 0, `[[3,6]]`, nil},
		{"range_in_v1", 1, `[[3,6],9]`, nil},
		{"range_reversed", 4, `[[6,3]]`, nil},
		{"range_triple", 4, `[[3,4,5]]`, nil},
		{"range_single", 4, `[[3]]`, nil},
		{"range_negative", 4, `[[-1,3]]`, nil},
		{"range_reaches_own_seq", 4, `[[48,50]]`, nil},
		{"range_overlaps_item", 4, `[[3,6],5]`, nil},
		{"own_seq", 0, `[50]`, nil},
		{"above_own_seq", 0, `[51]`, nil},
		{"repeat", 0, `[4,7,4]`, nil},
		{"negative", 0, `[-1]`, nil},
		{"fraction", 0, `[1.5]`, nil},
		{"string", 0, `["1"]`, nil},
		{"not_array", 0, `3`, nil},
		{"null", 0, `null`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			line := `{"type":"compaction/end","seq":50,"time":1,"data":{},"sourceEventSeqs":` + c.stored + `}`
			r, err := DecodeRecord([]byte(line), c.v)
			if c.want == nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("DecodeRecord: %v, want ErrCorrupt", err)
				}
				return
			}
			if err != nil || !slices.Equal(r.Event.SourceEventSeqs, c.want) || r.Event.SourceEventSeqs == nil {
				t.Fatalf("DecodeRecord: %v, %v; want %v", r.Event.SourceEventSeqs, err, c.want)
			}
		})
	}
}

func TestAppendSourceSeqsV2(t *testing.T) {
	for _, c := range []struct {
		seqs []int64
		want string
	}{
		{[]int64{3, 4, 5, 6, 9, 11, 12}, `[[3,6],9,11,12]`},
		{[]int64{40, 41, 1, 18, 22, 37}, `[40,41,1,18,22,37]`},
		{[]int64{1, 2, 3, 0}, `[1,2,3,0]`}, // not increasing: stored as it is
		{[]int64{0, 1, 2}, `[[0,2]]`},
		{[]int64{7}, `[7]`},
		{[]int64{}, `[]`},
	} {
		if got := AppendSourceSeqsV2(nil, c.seqs); string(got) != c.want {
			t.Errorf("AppendSourceSeqsV2(%v) = %s, want %s", c.seqs, got, c.want)
		}
	}
}

// TestSourceSeqsRoundTrip: whatever valid list an event cites, its v2+
// physical form decodes to the same list, increasing or not.
func TestSourceSeqsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pool := rapid.SliceOfDistinct(rapid.Int64Range(0, 200), rapid.ID[int64]).Draw(t, "seqs")
		if rapid.Bool().Draw(t, "sorted") {
			slices.Sort(pool)
		}
		e := Event{Type: "compaction/end", Seq: 201, Time: 1, Data: json.RawMessage(`{}`), SourceEventSeqs: pool}
		for _, v := range []int{0, 2, 4} {
			line := e.AppendRecordJSON(nil, v)
			r, err := DecodeRecord(line, v)
			if err != nil {
				t.Fatalf("v%d %s: %v", v, line, err)
			}
			if !slices.Equal(r.Event.SourceEventSeqs, pool) {
				t.Fatalf("v%d %s decodes to %v, want %v", v, line, r.Event.SourceEventSeqs, pool)
			}
		}
	})
}

func TestAppendRecordJSON(t *testing.T) {
	e := Event{Type: "tool/result", Seq: 9, Time: 5, Data: json.RawMessage(`{"a":1}`), Ignorable: true,
		SurfaceOp: json.RawMessage(`"append"`), SourceEventSeqs: []int64{1, 2, 3, 7}}
	for v, want := range map[int]string{
		0: `{"type":"tool/result","seq":9,"time":5,"data":{"a":1},"ignorable":true,"sourceEventSeqs":[1,2,3,7],"surfaceOp":"append"}`,
		1: `{"type":"tool/result","seq":9,"time":5,"data":{"a":1},"ignorable":true,"sourceEventSeqs":[1,2,3,7],"surfaceOp":"append"}`,
		2: `{"type":"tool/result","seq":9,"time":5,"data":{"a":1},"ignorable":true,"sourceEventSeqs":[[1,3],7],"surfaceOp":"append"}`,
		4: `{"type":"tool/result","seq":9,"time":5,"data":{"a":1},"ignorable":true,"sourceEventSeqs":[[1,3],7],"surfaceOp":"append"}`,
	} {
		if got := e.AppendRecordJSON(nil, v); string(got) != want {
			t.Errorf("v%d:\n got %s\nwant %s", v, got, want)
		}
	}
	if got, want := string(e.AppendJSON(nil)), `{"type":"tool/result","seq":9,"time":5,"data":{"a":1},"ignorable":true,"sourceEventSeqs":[1,2,3,7],"surfaceOp":"append"}`; got != want {
		t.Errorf("AppendJSON:\n got %s\nwant %s", got, want)
	}
	if got, _ := json.Marshal(Event{Type: "turn/start"}); string(got) != `{"type":"turn/start","seq":0,"time":0,"data":{}}` {
		t.Errorf("json.Marshal(Event) = %s", got)
	}
}

func TestAppendString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              `"plain"`,
		"q\"b\\":             `"q\"b\\"`,
		"\n\r\t\b\f\x00\x1f": `"\n\r\t\b\f\u0000\u001f"`,
		"<&>\u2028\x7f":      "\"<&>\u2028\x7f\"", // no HTML escaping, like JSON.stringify
		"café 日本 🚀":          `"café 日本 🚀"`,
		"bad\xffutf8":        `"bad\ufffdutf8"`,
	} {
		if got := string(rawjson.AppendString(nil, in)); got != want {
			t.Errorf("rawjson.AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPackedRows(t *testing.T) {
	for _, c := range []struct {
		name string
		line string
		want []string // member events; nil: rejected
	}{
		{"text", `{"type":"text-chunks","seq0":12,"time0":100,"data":{"turn":1,"step":2,"index":0,"dt":[3,-1],"texts":["Hel","lo","!"]}}`, []string{
			`{"type":"assistant/chunk","seq":12,"time":100,"data":{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"Hel"}}}`,
			`{"type":"assistant/chunk","seq":13,"time":103,"data":{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"lo"}}}`,
			`{"type":"assistant/chunk","seq":14,"time":102,"data":{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"!"}}}`,
		}},
		{"reasoning", `{"type":"reasoning-chunks","seq0":0,"time0":5,"data":{"turn":1,"step":1,"index":1,"dt":[0,0],"texts":["a","\"b\"","\n"]}}`, []string{
			`{"type":"assistant/chunk","seq":0,"time":5,"data":{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":1,"text":"a"}}}`,
			`{"type":"assistant/chunk","seq":1,"time":5,"data":{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":1,"text":"\"b\""}}}`,
			`{"type":"assistant/chunk","seq":2,"time":5,"data":{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":1,"text":"\n"}}}`,
		}},
		{"tool_call_named", `{"type":"tool-call-chunks","seq0":3,"time0":9,"data":{"turn":2,"step":1,"index":0,"dt":[1,1],"id":"c1","name":"bash","args":["{\"a","\":","1}"]}}`, []string{
			`{"type":"assistant/chunk","seq":3,"time":9,"data":{"turn":2,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"c1","name":"bash","argumentsDelta":"{\"a"}}}`,
			`{"type":"assistant/chunk","seq":4,"time":10,"data":{"turn":2,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"c1","name":"bash","argumentsDelta":"\":"}}}`,
			`{"type":"assistant/chunk","seq":5,"time":11,"data":{"turn":2,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"c1","name":"bash","argumentsDelta":"1}"}}}`,
		}},
		{"tool_call_empty_name", `{"type":"tool-call-chunks","seq0":3,"time0":9,"data":{"turn":2,"step":1,"index":0,"dt":[1],"id":"c1","name":"","args":["{","}"]}}`, []string{
			`{"type":"assistant/chunk","seq":3,"time":9,"data":{"turn":2,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"c1","name":"","argumentsDelta":"{"}}}`,
			`{"type":"assistant/chunk","seq":4,"time":10,"data":{"turn":2,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"c1","name":"","argumentsDelta":"}"}}}`,
		}},
		{"tool_call_unnamed", `{"type":"tool-call-chunks","seq0":3,"time0":9,"data":{"turn":2,"step":1,"index":0,"dt":[],"id":"c1","args":["{}"]}}`, []string{
			`{"type":"assistant/chunk","seq":3,"time":9,"data":{"turn":2,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"c1","argumentsDelta":"{}"}}}`,
		}},
		{"dt_too_short", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b","c"]}}`, nil},
		{"dt_too_long", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1,1],"texts":["a","b","c"]}}`, nil},
		{"dt_fraction", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1.5],"texts":["a","b"]}}`, nil},
		{"dt_missing", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"texts":["a"]}}`, nil},
		{"texts_empty", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}}`, nil},
		{"texts_null_member", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a",null,"c"]}}`, nil},
		{"texts_number_member", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a",1]}}`, nil},
		{"args_on_text", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"args":["a"]}}`, nil},
		{"id_on_text", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"id":"c","texts":["a"]}}`, nil},
		{"tool_call_without_id", `{"type":"tool-call-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"args":["a"]}}`, nil},
		{"tool_call_null_name", `{"type":"tool-call-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"id":"c","name":null,"args":["a"]}}`, nil},
		{"missing_turn", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"step":1,"index":0,"dt":[],"texts":["a"]}}`, nil},
		{"row_extra_key", `{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]},"seq":0}`, nil},
		{"seq0_negative", `{"type":"text-chunks","seq0":-1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}`, nil},
		{"time_overflow", `{"type":"text-chunks","seq0":0,"time0":9007199254740991,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := DecodeRecord([]byte(c.line), 0)
			if c.want == nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("DecodeRecord: %v, want ErrCorrupt", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Packed == nil || r.FirstSeq() != r.Packed.Seq0 || r.NextSeq() != r.Packed.Seq0+int64(len(c.want)) {
				t.Fatalf("record %+v: FirstSeq %d, NextSeq %d", r, r.FirstSeq(), r.NextSeq())
			}
			for i, e := range r.Events() {
				if got := e.AppendJSON(nil); string(got) != c.want[i] {
					t.Errorf("member %d:\n got %s\nwant %s", i, got, c.want[i])
				}
			}
		})
	}
}

// fixtureLog is one log of dsh 0.1.0 with the events dsh's reader returned.
type fixtureLog struct{ raw, events string }

func fixtureLogs(t *testing.T) []fixtureLog {
	fixtures := fixture.Dir(t)
	raws, _ := filepath.Glob(filepath.Join(fixtures, "dsh-0.1.0/expected/jsonl-none/*.raw.jsonl"))
	if len(raws) != 10 {
		t.Fatalf("found %d raw logs in %s, want 10", len(raws), fixtures)
	}
	var out []fixtureLog
	for _, raw := range raws {
		out = append(out, fixtureLog{raw, strings.TrimSuffix(raw, ".raw.jsonl") + ".events.jsonl"})
	}
	return out
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		out = append(out, slices.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDecodeFixtures reads every v0 log dsh 0.1.0 wrote the way a backend
// does and expects exactly the events dsh's own reader returned, byte for
// byte: packed rows expanded, keys in dsh's order.
func TestDecodeFixtures(t *testing.T) {
	packedRows := 0
	for _, f := range fixtureLogs(t) {
		t.Run(filepath.Base(f.raw), func(t *testing.T) {
			lines := readLines(t, f.raw)
			h, err := ParseHeader(lines[0])
			if err != nil {
				t.Fatal(err)
			}
			var (
				got  [][]byte
				cur  Cursor
				seed SeedMarker
			)
			for i, line := range lines[1:] {
				r, err := DecodeRecord(line, h.Version)
				if err == nil {
					err = cur.Advance(&r)
				}
				if err != nil {
					t.Fatalf("line %d: %v", i+2, err)
				}
				if r.Packed != nil {
					packedRows++
				}
				for _, e := range r.Events() {
					if err := CheckVocabulary(&e, h.Version); err != nil {
						t.Fatalf("seq %d: %v", e.Seq, err)
					}
					seed.Observe(&e)
					got = append(got, e.AppendJSON(nil))
				}
			}
			if _, err := seed.Result(&h); err != nil {
				t.Fatal(err)
			}
			want := readLines(t, f.events)
			if len(got) != len(want) || cur.Next != int64(len(want)) {
				t.Fatalf("%d events (next seq %d), dsh read %d", len(got), cur.Next, len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("event %d:\n got %s\nwant %s", i, got[i], want[i])
				}
			}
		})
	}
	if packedRows == 0 {
		t.Fatal("no fixture log held a packed row")
	}
}

// TestDecodeFixturesV2V4 reads the v2-v4 logs from public dsh repositories.
func TestDecodeFixturesV2V4(t *testing.T) {
	fixtures := fixture.Dir(t)
	files, _ := filepath.Glob(filepath.Join(fixtures, "dsh-v2-v4/*/*/session.v*.jsonl"))
	if len(files) != 7 {
		t.Fatalf("found %d logs, want 7", len(files))
	}
	for _, path := range files {
		t.Run(strings.TrimPrefix(path, fixtures), func(t *testing.T) {
			lines := readLines(t, path)
			h, err := ParseHeader(lines[0])
			if err != nil {
				t.Fatal(err)
			}
			var (
				cur     Cursor
				seed    SeedMarker
				unknown int
			)
			for i, line := range lines[1:] {
				r, err := DecodeRecord(line, h.Version)
				if err == nil {
					err = cur.Advance(&r)
				}
				if err != nil {
					t.Fatalf("line %d: %v", i+2, err)
				}
				e := r.Event
				if err := CheckVocabulary(&e, h.Version); err != nil {
					if !errors.Is(err, ErrUnsupportedFormat) {
						t.Fatalf("seq %d: %v", e.Seq, err)
					}
					unknown++
				}
				seed.Observe(&e)
				// A physical record rewritten in its version's form decodes
				// to the same event.
				again, err := DecodeRecord(e.AppendRecordJSON(nil, h.Version), h.Version)
				if err != nil || !reflect.DeepEqual(again.Event, e) {
					t.Fatalf("seq %d does not survive a rewrite: %v", e.Seq, err)
				}
			}
			inherited, err := seed.Result(&h)
			if err != nil {
				t.Fatal(err)
			}
			// The plugin log is the only one dsh would refuse.
			if wantUnknown := strings.Contains(path, "legacy-sdk-history"); (unknown > 0) != wantUnknown {
				t.Fatalf("%d events of unknown type", unknown)
			}
			if h.Seeded() != (inherited > 0) {
				t.Fatalf("seeded %v, inherited %d", h.Seeded(), inherited)
			}
		})
	}
}

func TestCursor(t *testing.T) {
	rec := func(line string) *Record {
		r, err := DecodeRecord([]byte(line), 0)
		if err != nil {
			t.Fatal(err)
		}
		return &r
	}
	ev := func(seq int) *Record {
		return rec(fmt.Sprintf(`{"type":"turn/start","seq":%d,"time":1,"data":{}}`, seq))
	}
	packed := rec(`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`)
	var c Cursor
	for _, r := range []*Record{ev(0), packed, ev(4)} {
		if err := c.Advance(r); err != nil {
			t.Fatal(err)
		}
	}
	if c.Next != 5 {
		t.Fatalf("Next = %d, want 5", c.Next)
	}
	for _, c2 := range []struct {
		r    *Record
		want string
	}{
		{ev(6), "seq gap: expected 5, got 6"},
		{ev(4), "seq 4 overlaps: expected 5"},
		{packed, "seq 1 overlaps: expected 5"},
	} {
		err := c.Advance(c2.r)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("Advance: %v, want %q", err, c2.want)
		}
		if c.Next != 5 {
			t.Fatalf("a refused record moved the cursor to %d", c.Next)
		}
	}
}

func TestSeedMarker(t *testing.T) {
	seeded, unseeded := true, false
	seedLen := int64(19)
	marker := func(seq int64, data string) Event {
		return Event{Type: "session/end-seed", Seq: seq, Time: 1, Data: json.RawMessage(data)}
	}
	for _, c := range []struct {
		name   string
		h      Header
		events []Event
		want   int64
		ok     bool
	}{
		{"v0_seedLength", Header{Version: 0, SeedLength: &seedLen}, []Event{marker(19, `{}`)}, 19, true},
		{"v0_unseeded", Header{Version: 0}, nil, 0, true},
		{"v2_seeded", Header{Version: 2, IsSeeded: &seeded}, []Event{marker(28, `{"inherited":true}`)}, 28, true},
		{"v4_last_marker_counts", Header{Version: 4, IsSeeded: &seeded}, []Event{marker(3, `{"inherited":true}`), marker(9, `{"inherited":true}`)}, 9, true},
		{"v4_seeded_without_marker", Header{Version: 4, IsSeeded: &seeded}, []Event{marker(3, `{}`)}, 0, false},
		{"v4_inherited_false", Header{Version: 4, IsSeeded: &seeded}, []Event{marker(3, `{"inherited":false}`)}, 0, false},
		{"v4_nested_inherited", Header{Version: 4, IsSeeded: &seeded}, []Event{marker(3, `{"x":{"inherited":true}}`)}, 0, false},
		{"v4_other_case", Header{Version: 4, IsSeeded: &seeded}, []Event{marker(3, `{"x":{"inherited":true},"Inherited":true}`)}, 0, false},
		{"v4_other_type", Header{Version: 4, IsSeeded: &seeded}, []Event{{Type: "session/title", Seq: 3, Data: json.RawMessage(`{"inherited":true}`)}}, 0, false},
		{"v4_unseeded_with_marker", Header{Version: 4, IsSeeded: &unseeded}, []Event{marker(5, `{"inherited":true}`)}, 0, false},
		{"v4_unseeded_plain_marker", Header{Version: 4, IsSeeded: &unseeded}, []Event{marker(5, `{}`)}, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m SeedMarker
			for i := range c.events {
				m.Observe(&c.events[i])
			}
			got, err := m.Result(&c.h)
			if c.ok != (err == nil) || got != c.want {
				t.Fatalf("Result: %d, %v; want %d, ok=%v", got, err, c.want, c.ok)
			}
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Result: %v is not ErrCorrupt", err)
			}
		})
	}
}

// TestDecodeRecordAlias checks that the view decoder aliases the line for a
// compact record (and copies, compacted, the values of one that is not).
func TestDecodeRecordAlias(t *testing.T) {
	for _, c := range []struct {
		line  string
		alias bool
	}{
		{`{"type":"user/message","seq":1,"time":2,"data":{"a":[1,2]},"surfaceOp":"append"}`, true},
		{`{"type":"user/message","seq":1,"time":2,"data":{"a": [1, 2]},"surfaceOp":"append"}`, false},
	} {
		line := []byte(c.line)
		r, err := DecodeRecordAlias(line, 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Event.Data) != `{"a":[1,2]}` {
			t.Errorf("%s: data %s", c.line, r.Event.Data)
		}
		data, op := string(r.Event.Data), string(r.Event.SurfaceOp)
		for i := range line {
			line[i] = '#' // what aliases the line changes with it
		}
		if alias := string(r.Event.Data) != data; alias != c.alias || string(r.Event.SurfaceOp) == op {
			t.Errorf("%s: data aliases the line: %v, want %v; surfaceOp %s", c.line, alias, c.alias, r.Event.SurfaceOp)
		}
	}
}

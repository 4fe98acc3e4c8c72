package reconcile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// This file holds a reference trace decoder built on encoding/json, with
// none of the scanner's shortcuts (one pass, known rows, interning, arenas):
// the fast decoder must accept and reject the same lines and decode the
// same values.

// refDecodeTrace decodes a JSONL trace as DecodeTrace does, line by line with
// encoding/json.
func refDecodeTrace(data []byte, name string) (*Trace, error) {
	t := &Trace{Name: name}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte order mark first is skipped
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for n, line := range lines {
		line = bytes.Trim(line, " \t\r\n")
		if len(line) == 0 {
			continue
		}
		rec, meta, err := refLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if meta != nil {
			if t.Meta != nil || len(t.Records) > 0 {
				return nil, fmt.Errorf("line %d: meta record must be the first record", n+1)
			}
			t.Meta = meta
			if meta.Name != "" {
				t.Name = meta.Name
			}
			t.Tab, t.Expect = meta.Tab, meta.Expect
			continue
		}
		rec.Line = n + 1
		t.Records = append(t.Records, rec)
	}
	return t, nil
}

// object decodes an object's members; the last of a name wins.
func refObject(v []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null")
	}
	return m, nil
}

func isNull(v json.RawMessage) bool { return v == nil || string(v) == "null" }

func refString(v json.RawMessage) (string, error) {
	var s string
	if isNull(v) {
		return "", nil
	}
	err := json.Unmarshal(v, &s)
	return s, err
}

func refLoose(v json.RawMessage) string {
	if isNull(v) {
		return ""
	}
	if s, err := refString(v); err == nil {
		return s
	}
	return string(v)
}

func refInt(v json.RawMessage) (int64, error) {
	if isNull(v) {
		return 0, nil
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return 0, err
	}
	n, ok := x.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number: %s", v)
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, err
	}
	return i, nil
}

func refBool(v json.RawMessage) (bool, error) {
	var b bool
	if isNull(v) {
		return false, nil
	}
	err := json.Unmarshal(v, &b)
	return b, err
}

func refLine(line []byte) (Record, *Meta, error) {
	m, err := refObject(line)
	if err != nil {
		return Record{}, nil, err
	}
	if isNull(m["k"]) {
		return Record{}, nil, errors.New("no k")
	}
	kind, err := refString(m["k"])
	if err != nil {
		return Record{}, nil, err
	}
	if kind == KindMeta {
		meta := &Meta{}
		for key, v := range m {
			switch key {
			case "k":
			case "version":
				n, err := refInt(v)
				meta.Version = int(n)
				if err != nil {
					return Record{}, nil, err
				}
			case "tab":
				meta.Tab, err = refString(v)
			case "name":
				meta.Name, err = refString(v)
			case "expect":
				meta.Expect, err = refString(v)
			default:
				if meta.Extra == nil {
					meta.Extra = map[string]string{}
				}
				meta.Extra[key] = refLoose(v)
			}
			if err != nil {
				return Record{}, nil, err
			}
		}
		return Record{}, meta, nil
	}
	rec := Record{Kind: kind}
	switch kind {
	case KindWS:
		if isNull(m["ev"]) {
			return rec, nil, errors.New("missing ev")
		}
		rec.Ev, err = refEvent(m["ev"])
	case KindSend:
		if rec.ID, err = refString(m["id"]); err == nil {
			rec.Text, err = refString(m["text"])
		}
	case KindHTTP:
		if rec.ID, err = refString(m["id"]); err == nil {
			if rec.Status, err = refString(m["status"]); err == nil {
				rec.MessageID, err = refString(m["messageId"])
			}
		}
	case KindCancel:
		rec.ID, err = refString(m["id"])
	case KindScroll:
		if isNull(m["up"]) {
			return rec, nil, errors.New("missing up")
		}
		rec.Up, err = refBool(m["up"])
	case KindFetch:
		var req int64
		if req, err = refInt(m["req"]); err != nil {
			return rec, nil, err
		}
		if req < 1 || req > 1<<31 {
			return rec, nil, errors.New("req out of range")
		}
		rec.Req = int(req)
		if rec.FetchErr, err = refBool(m["error"]); err != nil {
			return rec, nil, err
		}
		if !isNull(m["rows"]) {
			rec.HasRows = true
			rec.Rows, err = refChunks(m["rows"])
		}
	}
	return rec, nil, err
}

func refEvent(v json.RawMessage) (*Event, error) {
	m, err := refObject(v)
	if err != nil {
		return nil, err
	}
	ev := &Event{Raw: v}
	if ev.Type, err = refString(m["type"]); err != nil || ev.Type == "" {
		return nil, errors.New("no type")
	}
	if ev.TabID, err = refString(m["tabId"]); err != nil {
		return nil, err
	}
	switch ev.Type {
	case "tab-created":
		ev.ID = refLoose(m["id"])
	case "status":
		ev.Status, err = refString(m["status"])
	case "turn-start", "turn-sealed":
		ev.TurnID, err = refString(m["turnId"])
	case "text-delta", "reasoning-delta":
		ev.Delta, err = refString(m["delta"])
	case "shell-output":
		ev.Data, ev.Stream = refLoose(m["data"]), refLoose(m["stream"])
	case "tool-call":
		if v := m["toolCall"]; !isNull(v) {
			tm, err := refObject(v)
			if err != nil {
				return nil, err
			}
			ev.ToolCall = &ToolCall{ID: refLoose(tm["id"]), Name: refLoose(tm["name"]), Arguments: tm["arguments"]}
		}
	case "tool-result":
		if v := m["toolResult"]; !isNull(v) {
			tm, err := refObject(v)
			if err != nil {
				return nil, err
			}
			isErr, _ := refBool(tm["isError"])
			ev.ToolResult = &ToolResult{ToolCallID: refLoose(tm["toolCallId"]), Result: tm["result"], IsError: isErr}
		}
	case "error":
		ev.Error = m["error"]
	case "notice":
		ev.Message = refLoose(m["message"])
	case "model-changed":
		ev.ModelID = refLoose(m["modelId"])
	case "message-queued":
		if ev.MessageID, err = refString(m["messageId"]); err == nil {
			ev.Message, err = refString(m["message"])
		}
	case "message-consumed":
		if v := m["messageIds"]; !isNull(v) {
			var ids []json.RawMessage
			if err = json.Unmarshal(v, &ids); err != nil {
				return nil, err
			}
			for _, id := range ids {
				if isNull(id) {
					return nil, errors.New("null id")
				}
				s, err := refString(id)
				if err != nil {
					return nil, err
				}
				ev.MessageIDs = append(ev.MessageIDs, s)
			}
		}
		ev.Reason, err = refString(m["reason"])
	case "message-cancelled":
		ev.MessageID, err = refString(m["messageId"])
	case "statuses":
		ev.Statuses, err = refStatuses(m["statuses"])
	}
	if err != nil {
		return nil, err
	}
	return ev, nil
}

func refStatuses(v json.RawMessage) (map[string]StatusSnapshot, error) {
	if isNull(v) {
		return nil, nil
	}
	m, err := refObject(v)
	if err != nil {
		return nil, err
	}
	out := map[string]StatusSnapshot{}
	for tab, sv := range m {
		if isNull(sv) {
			continue
		}
		sm, err := refObject(sv)
		if err != nil {
			return nil, err
		}
		var s StatusSnapshot
		if s.Status, err = refString(sm["status"]); err != nil {
			return nil, err
		}
		if s.CurrentAssistantID, err = refString(sm["currentAssistantId"]); err != nil {
			return nil, err
		}
		if s.CurrentTurnID, err = refString(sm["currentTurnId"]); err != nil {
			return nil, err
		}
		if c := sm["currentChunks"]; !isNull(c) {
			if s.CurrentChunks, err = refChunks(c); err != nil {
				return nil, err
			}
		}
		out[tab] = s
	}
	return out, nil
}

func refChunks(v json.RawMessage) ([]Chunk, error) {
	var els []json.RawMessage
	if err := json.Unmarshal(v, &els); err != nil {
		return nil, err
	}
	if els == nil {
		return nil, errors.New("not an array")
	}
	out := []Chunk{}
	for _, el := range els {
		m, err := refObject(el)
		if err != nil {
			return nil, err
		}
		c := Chunk{Raw: el, ID: refLoose(m["id"]), TabID: refLoose(m["tabId"]), Data: m["data"]}
		if c.Seq, err = refInt(m["seq"]); err != nil {
			return nil, err
		}
		if c.TurnID, err = refString(m["turnId"]); err != nil {
			return nil, err
		}
		if c.Role, err = refString(m["role"]); err != nil {
			return nil, err
		}
		if c.Type, err = refString(m["type"]); err != nil {
			return nil, err
		}
		step, _ := refInt(m["step"])
		c.Step = int(step)
		c.CreatedAt, _ = refInt(m["createdAt"])
		if c.Role == RoleUser || c.Type == "tool_result" {
			c.text = refChunkText(c.Role, c.Data)
		}
		out = append(out, c)
	}
	return out, nil
}

// refChunkText: a user row's data.text when that is a string, otherwise
// every string value inside data, in document order, joined by newlines.
func refChunkText(role string, data json.RawMessage) string {
	if len(data) == 0 {
		return ""
	}
	if role == RoleUser {
		if m, err := refObject(data); err == nil {
			if s, err := refString(m["text"]); err == nil && !isNull(m["text"]) && m["text"] != nil {
				return s
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var parts []string
	// inObject[i] says whether level i is an object; keyNext whether
	// the next string token at that level is a key.
	var inObject, keyNext []bool
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		top := len(inObject) - 1
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top >= 0 && inObject[top] {
					keyNext[top] = true
				}
				inObject = append(inObject, tok == '{')
				keyNext = append(keyNext, tok == '{')
			default:
				inObject, keyNext = inObject[:top], keyNext[:top]
			}
			continue
		case string:
			if top >= 0 && inObject[top] && keyNext[top] {
				keyNext[top] = false
				continue
			}
			parts = append(parts, tok)
		}
		if top >= 0 && inObject[top] {
			keyNext[top] = true
		}
	}
	return strings.Join(parts, "\n")
}

var lineOf = regexp.MustCompile(`^line (\d+):`)

// sameDecoding decodes data with DecodeTrace and the reference and reports
// how they differ: acceptance, the line an error names, or any value.
func sameDecoding(data []byte) error {
	got, err := DecodeTrace(bytes.NewReader(data), "x")
	want, refErr := refDecodeTrace(data, "x")
	if (err == nil) != (refErr == nil) {
		return fmt.Errorf("DecodeTrace: %v; reference: %v", err, refErr)
	}
	if err != nil {
		if g, w := lineOf.FindString(err.Error()), lineOf.FindString(refErr.Error()); g != w || g == "" {
			return fmt.Errorf("DecodeTrace: %v; reference: %v", err, refErr)
		}
		return nil
	}
	for i := range got.Records {
		got.Records[i].rows = nil // an index of Rows, built from them
	}
	if len(got.Records) == 0 {
		got.Records = nil
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("decoded differently:\n%s\nreference:\n%s", dump(got), dump(want))
	}
	return nil
}

func dump(t *Trace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%+v %+v\n", *t, t.Meta)
	for _, r := range t.Records {
		fmt.Fprintf(&b, "%+v", r)
		if r.Ev != nil {
			fmt.Fprintf(&b, " ev %+v", *r.Ev)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestDecodeMatchesReference: every committed trace, every tab of every
// committed capture (as a trace) and a recorded session decode as
// encoding/json reads them.
func TestDecodeMatchesReference(t *testing.T) {
	var inputs [][]byte
	var names []string
	for _, path := range traceFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inputs, names = append(inputs, b), append(names, path)
	}
	captures, _ := filepath.Glob("../../testdata/captures/*.har")
	if len(captures) == 0 {
		t.Fatal("no captures in testdata/captures")
	}
	for _, path := range captures {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		traces, err := DecodeCapture(f, path)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range traces {
			var buf bytes.Buffer
			if err := tr.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			inputs, names = append(inputs, buf.Bytes()), append(names, path+" tab "+tr.Tab)
		}
	}
	_, rec := encodeDecode(t, recordedSession(20))
	inputs, names = append(inputs, rec), append(names, "recorded session")
	for i, in := range inputs {
		if err := sameDecoding(in); err != nil {
			t.Errorf("%s: %v", names[i], err)
		}
	}
}

// FuzzDecodeTraceReference: on any input, DecodeTrace accepts what the
// encoding/json reference accepts, rejects it on the same line, and
// decodes the same values.
func FuzzDecodeTraceReference(f *testing.F) {
	for _, path := range traceFiles(f) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	row := `{"id":"r0","tabId":"t1","seq":0,"turnId":"a","role":"user","type":"text","data":{"text":"hi"}}`
	for _, s := range []string{
		`{"k":"fetch","req":1,"rows":[` + row + `]}` + "\n" + `{"k":"fetch","req":2,"rows":[` + row + `,` + row + `,{"seq":"x"}]}`,
		`{"k":"fetch","req":1,"rows":[` + row + `]}` + "\n" + `{"k":"fetch","req":2,"rows":[` + row + `x]}`,
		`{"k":"meta","tab":5,"tab":"t","x":[1],"\u006bey":null}`,
		`{"k":"ws","ev":{"type":"statuses","statuses":{"t1":{"status":"idle","currentChunks":[` + row + `]},"t1":null,"t2":{"status":1}}}}`,
		`{"k":"ws","ev":{"type":"tool-call","toolCall":{"id":1,"arguments":{"a":[1,2]}}},"ev":{"type":"tool-result","toolResult":{"result":"x","isError":true}}}`,
		`{"\u006b":"ws","ev":{"typ\u0065":"error","error":{"statusCode":500}}}`,
		`{"k":"ws","ev":{"type":"message-consumed","messageIds":["a",null]}}`,
		`{"k":"fetch","req":1,"rows":[{"role":"user","data":{"text":"a","text":1,"b":["c",{"d":"e"}]}}]}`,
		"{\"k\":\"scroll\",\"up\":true}\r\n\xc2\xa0{\"k\":\"cancel\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := sameDecoding(data); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDecodeTraceErrors: what the fast decoder rejects, and how it says so.
func TestDecodeTraceErrors(t *testing.T) {
	long := `{"k":"send","id":"s1","text":"` + strings.Repeat("a", maxLine) + `"}`
	for _, c := range []struct{ in, want string }{
		{"{\"k\":\"scroll\",\"up\":true}\n" + long + "\n", fmt.Sprintf("line 2: longer than %d bytes", maxLine)},
		{`{"ev":{"type":"status"}}`, `line 1: record without "k"`},
		{`{"k":null}`, `line 1: record without "k"`},
		{`{"k":1}`, `line 1: field k: unexpected number`},
		{"\n\n" + `{"k":"ws","ev":{"tabId":"t1"}}`, "line 3: ws record: ev: frame without type"},
		{`{"k":"ws","ev":[]}`, "line 1: ws record: ev: want an object, not array"},
		{`[1]`, "line 1: a record must be a JSON object, not array"},
		{`{"k":"ws","ev":{"type":"status"}} x`, "line 1: malformed JSON: invalid character 'x' after top-level value"},
		{`{"k":"ws","ev":{"type":"status",}}`, "line 1: malformed JSON: invalid character '}' looking for beginning of object key string"},
		{"\xc2\xa0{\"k\":\"scroll\",\"up\":true}", "line 1: malformed JSON"},
		{`{"k":"fetch","req":1,"rows":{}}`, "line 1: fetch record: field rows: unexpected object"},
		{`{"k":"fetch","req":1,"rows":[1]}`, "line 1: fetch record: field rows: unexpected array of number"},
		{`{"k":"fetch","req":1,"rows":[{"seq":"1"}]}`, "line 1: fetch record: field rows.seq: unexpected string"},
	} {
		_, err := DecodeTrace(strings.NewReader(c.in), "x")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%.60q: error %.200v, want %q", c.in, err, c.want)
		}
	}
	// Unknown fields and frame types, and fields a frame's type does not
	// use, never fail.
	in := `{"k":"ws","x":{"y":[1,2]},"ev":{"type":"brand-new","delta":5,"statuses":"?"}}
{"k":"ws","ev":{"type":"usage","usage":7,"toolCall":"x"}}
{"k":"telemetry","rows":1}`
	tr, err := DecodeTrace(strings.NewReader(in), "x")
	if err != nil || len(tr.Records) != 3 {
		t.Fatalf("%v, %+v", err, tr)
	}
}

func TestLineCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 1},
		{"a", 1},
		{"a\n", 2},
		{"a\nb\n\nc", 4},
		{strings.Repeat("x\n", 70000), 70001},
		{strings.Repeat("x", maxLine+1) + "\n", 0},
	} {
		if got := lineCount(strings.NewReader(c.in)); got != c.want {
			t.Errorf("%d bytes: %d lines, want %d", len(c.in), got, c.want)
		}
	}
	if got := lineCount(io.MultiReader(strings.NewReader("a\n"))); got != 0 {
		t.Errorf("a reader that cannot be read twice: %d lines, want 0", got)
	}
}

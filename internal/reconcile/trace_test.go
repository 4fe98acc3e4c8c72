package reconcile

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeTrace(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		wantErr string // substring; "" means success
		records int
		check   func(t *testing.T, tr *Trace)
	}{
		{name: "meta and events", in: `{"k":"meta","version":1,"tab":"t1","name":"n","expect":"pass","extra":"x"}
{"k":"ws","ev":{"type":"turn-start","tabId":"t1","turnId":"a"}}

{"k":"fetch","req":1,"rows":[]}
`, records: 2, check: func(t *testing.T, tr *Trace) {
			if tr.Name != "n" || tr.Tab != "t1" || tr.Expect != "pass" || tr.Meta.Extra["extra"] != "x" {
				t.Errorf("meta: %+v %+v", tr, tr.Meta)
			}
			if r := tr.Records[1]; !r.HasRows || r.Rows == nil && len(r.Rows) != 0 {
				t.Errorf("empty rows decoded as no rows: %+v", r)
			}
		}},
		{name: "no meta keeps the given name", in: `{"k":"scroll","up":true}`, records: 1, check: func(t *testing.T, tr *Trace) {
			if tr.Name != "given" || !tr.Records[0].Up {
				t.Errorf("%+v", tr)
			}
		}},
		{name: "unknown kind is kept for a warning", in: `{"k":"telemetry","x":1}`, records: 1},
		{name: "fetch without rows asks the backend", in: `{"k":"fetch","req":2}`, records: 1, check: func(t *testing.T, tr *Trace) {
			if r := tr.Records[0]; r.HasRows || r.FetchErr || r.Req != 2 {
				t.Errorf("%+v", r)
			}
		}},
		{name: "malformed JSON names the line", in: "{\"k\":\"scroll\",\"up\":true}\n{\"k\":", wantErr: "line 2"},
		{name: "wrong field type names the line", in: `{"k":"ws","ev":{"type":"text-delta","delta":5}}`, wantErr: "line 1"},
		{name: "ws without ev", in: `{"k":"ws"}`, wantErr: "missing ev"},
		{name: "scroll without up", in: `{"k":"scroll"}`, wantErr: "missing up"},
		{name: "fetch req 0", in: `{"k":"fetch","req":0}`, wantErr: "numbered from 1"},
		{name: "meta not first", in: "{\"k\":\"scroll\",\"up\":true}\n{\"k\":\"meta\",\"version\":1}", wantErr: "first record"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := DecodeTrace(strings.NewReader(c.in), "given")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Records) != c.records {
				t.Fatalf("%d records, want %d", len(tr.Records), c.records)
			}
			if c.check != nil {
				c.check(t, tr)
			}
		})
	}
}

// TestUnknownIsInconclusive: skipped records make the verdict inconclusive.
func TestUnknownIsInconclusive(t *testing.T) {
	for _, in := range []string{
		`{"k":"telemetry"}`,
		`{"k":"ws","ev":{"type":"brand-new-frame","tabId":"t1"}}`,
		`{"k":"fetch","req":9,"rows":[]}`,
		// Nothing to check, or a meta version this checker does not know.
		``,
		`{"k":"meta","version":1,"name":"empty"}`,
		`{"k":"meta","version":2,"name":"future"}` + "\n" + `{"k":"ws","ev":{"type":"tab-created","tabId":"t1","id":"t1"}}`,
	} {
		tr, err := DecodeTrace(strings.NewReader(in), "x")
		if err != nil {
			t.Fatal(err)
		}
		res := Run(tr, Options{})
		if res.Verdict != Inconclusive || len(res.Warnings) != 1 {
			t.Errorf("%s: verdict %s, warnings %v", in, res.Verdict, res.Warnings)
		}
	}
}

// TestEncodeRoundTrip: every scenario file survives decode, encode, decode.
func TestEncodeRoundTrip(t *testing.T) {
	for _, path := range traceFiles(t) {
		tr := loadTrace(t, path)
		var buf bytes.Buffer
		if err := tr.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := DecodeTrace(bytes.NewReader(buf.Bytes()), "")
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(back.Records) != len(tr.Records) || back.Name != tr.Name {
			t.Fatalf("%s: round trip changed the trace", path)
		}
		for i := range tr.Records {
			if back.Records[i].String() != tr.Records[i].String() {
				t.Fatalf("%s record %d: %s vs %s", path, i, back.Records[i], tr.Records[i])
			}
		}
	}
}

// FuzzDecodeTrace: decoding and replaying untrusted bytes never panics.
func FuzzDecodeTrace(f *testing.F) {
	for _, path := range traceFiles(f) {
		var buf bytes.Buffer
		if err := loadTrace(f, path).Encode(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"k":"ws","ev":{"type":"statuses","statuses":{"t1":{"status":"running","currentAssistantId":"x","currentChunks":[{"type":"text","data":{"text":"hi"}}]}}}}`))
	f.Add([]byte(`{"k":"ws","ev":{"type":"message-consumed","messageIds":["a","a"],"reason":"continuation"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := DecodeTrace(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		for _, pol := range Policies() {
			res := Run(tr, Options{Policy: pol})
			if res.Verdict == Fail && res.First() == nil {
				t.Fatal("fail without a violation")
			}
		}
		var buf bytes.Buffer
		if err := tr.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeTrace(&buf, "again"); err != nil {
			t.Fatalf("re-decoding an encoded trace: %v", err)
		}
	})
}

// TestEveryFrameType: the protocol trace holds every frame type replay.md
// lists, in the shapes the server sends (done's message an object, error
// with statusCode, tab-created and turn-sealed with all their fields, …),
// and passes under membership with no warning.
func TestEveryFrameType(t *testing.T) {
	tr := loadTrace(t, filepath.Join(tracesDir, "protocol-every-frame.jsonl"))
	seen := map[string]bool{}
	for _, r := range tr.Records {
		if r.Kind == KindWS {
			seen[r.Ev.Type] = true
		}
	}
	for _, typ := range FrameTypes() {
		if !seen[typ] {
			t.Errorf("no %s frame", typ)
		}
	}
	res := Run(tr, Options{})
	if res.Verdict != Pass || len(res.Warnings) > 0 {
		t.Fatalf("%s, warnings %v, %+v", res.Verdict, res.Warnings, res.First())
	}
}

// TestStrictWhereItMatters: malformed JSON, a record without k and a ws
// record without ev.type are errors naming the line; fields the model does
// not read take any shape.
func TestStrictWhereItMatters(t *testing.T) {
	for in, want := range map[string]string{
		`{"k":"ws","ev":{"type":"turn-start","turnId":"a"}}` + "\n" + `{"k":"ws",`: "line 2: malformed JSON",
		`{"ev":{"type":"done"}}`:         `line 1: record without "k"`,
		`{"k":null}`:                     `line 1: record without "k"`,
		`{"k":7}`:                        "line 1: field k: unexpected number",
		`{"k":"ws","ev":{"tabId":"t1"}}`: "line 1: ws record: ev: frame without type",
		`{"k":"ws","ev":{"type":""}}`:    "line 1: ws record: ev: frame without type",
		`{"k":"ws","ev":"done"}`:         "line 1: ws record: ev: want an object, not string",
		`{"k":"ws","ev":{"type":"message-queued","messageId":["x"]}}`: "line 1: ws record: ev: field messageId: unexpected array",
	} {
		_, err := DecodeTrace(strings.NewReader(in), "x")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
	for _, in := range []string{
		`{"k":"ws","ev":{"type":"done","tabId":"t1","message":{"role":"assistant","chunks":[{"type":"text","text":"x"}]}}}`,
		`{"k":"ws","ev":{"type":"error","tabId":"t1","error":{"message":"boom"},"statusCode":500}}`,
		`{"k":"ws","ev":{"type":"turn-sealed","tabId":"t1","turnId":"a","usageStats":null,"extra":[1,{"y":2}]}}`,
		`{"k":"ws","ev":{"type":"text-delta","tabId":"t1","delta":"x","message":42,"toolCall":"ignored"}}`,
		`{"k":"send","id":"m","text":"t","ev":5,"rows":"whatever"}`,
	} {
		if _, err := DecodeTrace(strings.NewReader(in), "x"); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// TestDecodeTraceBOM: a byte order mark before the first record is
// skipped, as editors on Windows write it; elsewhere it is malformed.
func TestDecodeTraceBOM(t *testing.T) {
	line := `{"k":"ws","ev":{"type":"tab-created","tabId":"t1","id":"t1"}}` + "\n"
	tr, err := DecodeTrace(strings.NewReader("\xef\xbb\xbf"+line+line), "x")
	if err != nil || len(tr.Records) != 2 {
		t.Fatalf("%v", err)
	}
	if _, err := DecodeTrace(strings.NewReader(line+"\xef\xbb\xbf"+line), "x"); err == nil || !strings.HasPrefix(err.Error(), "line 2: malformed JSON") {
		t.Fatalf("a mark on line 2: %v", err)
	}
}

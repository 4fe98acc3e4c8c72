package reconcile

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/captures from testdata/traces")

const capturesDir = "../../testdata/captures"

// The captures in testdata/captures are made from the traces in
// testdata/traces by buildCapture, with the noise of a real capture: the
// page's history load before the socket opens, an asset, a page of older
// history, frames the page sent, a binary and a non-JSON frame, frames of no
// tab (permission-prompt, task-list-update, config-reload), usage, done and
// compaction frames in the shapes the server sends, tab-created and
// turn-sealed with all their fields, and a second tab with its own turn.
// `go test ./internal/reconcile -run TestCaptures -update` rewrites them.

var captureBase = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// harDoc is the part of HAR 1.2 the builder writes, in Chrome's field order.
type harDoc struct {
	Log harLog `json:"log"`
}

type harLog struct {
	Version string         `json:"version"`
	Creator map[string]any `json:"creator"`
	Pages   []any          `json:"pages"`
	Entries []harOutEntry  `json:"entries"`
}

type harOutEntry struct {
	ResourceType    string         `json:"_resourceType"`
	StartedDateTime string         `json:"startedDateTime"`
	Time            float64        `json:"time"`
	Request         harOutRequest  `json:"request"`
	Response        harOutResponse `json:"response"`
	Messages        []harWSMessage `json:"_webSocketMessages,omitempty"`
}

type harOutRequest struct {
	Method      string      `json:"method"`
	URL         string      `json:"url"`
	HTTPVersion string      `json:"httpVersion"`
	Headers     []any       `json:"headers"`
	QueryString []any       `json:"queryString"`
	PostData    *harOutPost `json:"postData,omitempty"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int         `json:"bodySize"`
}

type harOutPost struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

type harOutResponse struct {
	Status      int           `json:"status"`
	StatusText  string        `json:"statusText"`
	HTTPVersion string        `json:"httpVersion"`
	Headers     []any         `json:"headers"`
	Content     harOutContent `json:"content"`
	HeadersSize int           `json:"headersSize"`
	BodySize    int           `json:"bodySize"`
}

type harOutContent struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

// capBuilder lays a trace out on a timeline: record k at base+1s+k*20ms.
type capBuilder struct {
	host    string
	frames  []harWSMessage
	entries []harOutEntry
}

func at(d time.Duration) time.Time { return captureBase.Add(d) }

func recTime(k int) time.Time { return at(time.Second + time.Duration(k)*20*time.Millisecond) }

func epoch(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

func (b *capBuilder) frame(t time.Time, data string) {
	b.frames = append(b.frames, harWSMessage{Type: "receive", Time: epoch(t), Opcode: 1, Data: data})
}

func (b *capBuilder) request(method, path string, start, end time.Time, body any, status int, resp any) {
	e := harOutEntry{ResourceType: "fetch", StartedDateTime: start.Format(time.RFC3339Nano),
		Time: float64(end.Sub(start).Microseconds()) / 1000,
		Request: harOutRequest{Method: method, URL: "https://" + b.host + path, HTTPVersion: "http/2.0",
			Headers: []any{}, QueryString: []any{}, HeadersSize: -1, BodySize: 0},
		Response: harOutResponse{Status: status, StatusText: statusText(status), HTTPVersion: "http/2.0",
			Headers: []any{}, HeadersSize: -1, BodySize: -1}}
	if end.Before(start) {
		// Still waiting for its answer when the capture was saved.
		e.Time, e.Response.Status, e.Response.StatusText = -1, 0, ""
	}
	if body != nil {
		raw := mustMarshal(body)
		e.Request.PostData = &harOutPost{MimeType: "application/json", Text: raw}
		e.Request.BodySize = len(raw)
	}
	if resp != nil {
		raw := mustMarshal(resp)
		e.Response.Content = harOutContent{Size: len(raw), MimeType: "application/json", Text: raw}
		e.Response.BodySize = len(raw)
	}
	b.entries = append(b.entries, e)
}

func statusText(s int) string {
	switch s {
	case 200:
		return "OK"
	case 500:
		return "Internal Server Error"
	}
	return ""
}

func mustMarshal(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// realShape rewrites a frame of the trace in the shape the server sends
// (replay.md, Events): tab-created with all its fields, turn-sealed with
// usageStats. The model reads the same fields either way.
func realShape(ev *Event) string {
	var m map[string]any
	if err := json.Unmarshal(ev.raw(), &m); err != nil {
		panic(err)
	}
	switch ev.Type {
	case "tab-created":
		m["title"], m["keyId"], m["modelId"], m["parentTabId"] = "Fix the flaky test", "key-1", "deepseek-chat", nil
		m["workingDirectory"], m["agentModels"] = "/home/dev/src/app", map[string]any{"default": "deepseek-chat"}
	case "turn-sealed":
		m["usageStats"] = map[string]any{"inputTokens": 1830, "outputTokens": 212, "cacheReadTokens": 1024, "cacheWriteTokens": 0}
	case "tool-result":
		if tr, ok := m["toolResult"].(map[string]any); ok {
			tr["toolName"] = "run_command"
		}
	}
	return mustMarshal(m)
}

// issued replays t under membership and returns, for each request number,
// the index of the record that issued it.
func issued(t *Trace) map[int]int {
	out := map[int]int{}
	m := newMachine(Membership, traceTab(t), NewBackend(t.Records, traceTab(t)), router(t.Records, nil))
	for i, r := range t.Records {
		before := m.nextReq
		m.apply(i, r)
		for q := before + 1; q <= m.nextReq; q++ {
			out[q] = i
		}
	}
	return out
}

// withoutScroll is t without its scroll records: what a capture can hold.
func withoutScroll(t *Trace) *Trace {
	c := *t
	c.Records = nil
	for _, r := range t.Records {
		if r.Kind != KindScroll {
			c.Records = append(c.Records, r)
		}
	}
	return &c
}

// buildCapture writes t (its tab first, then a second tab "t-side") as a
// HAR capture with the noise of a real one.
func buildCapture(t *Trace) []byte {
	t = withoutScroll(t)
	tab := traceTab(t)
	b := &capBuilder{host: "dsh.example.test"}
	api := "/api/v1/tabs/"
	// Before the socket: the page, an asset, the tab's history load.
	b.request("GET", "/assets/app.js", at(0), at(40*time.Millisecond), nil, 200, nil)
	b.entries[len(b.entries)-1].Response.Content = harOutContent{Size: 23, MimeType: "text/javascript", Text: "console.log(\"dsh web\")"}
	b.request("GET", api+tab+"/chunks?limit=100", at(100*time.Millisecond), at(180*time.Millisecond), nil, 200,
		map[string]any{"chunks": []any{map[string]any{"id": "h0", "tabId": tab, "seq": 0, "turnId": "old", "step": 0, "role": "user", "type": "text", "data": map[string]any{"text": "earlier"}, "createdAt": 1764496800000}}, "hasMore": true})
	socketOpen := at(900 * time.Millisecond)
	b.frames = append(b.frames, harWSMessage{Type: "send", Time: epoch(socketOpen), Opcode: 1, Data: `{"type":"subscribe","tabs":["` + tab + `"]}`})
	b.frame(socketOpen.Add(time.Millisecond), `{"type":"config-reload"}`)
	b.frame(socketOpen.Add(2*time.Millisecond), `{"type":"permission-prompt","pending":[]}`)

	req := issued(t)
	reqOf := map[int]int{} // record index of a fetch -> its request number
	var sealed bool
	for k, r := range t.Records {
		when := recTime(k)
		switch r.Kind {
		case KindWS:
			ev := r.Ev
			if ev.TabID == tab && (ev.Type == "turn-sealed" && !sealed || ev.Type == "status" && ev.Status == StatusIdle) {
				// The server ends each turn's message with done (its
				// message an object) and reports the turn's usage.
				b.frame(when.Add(-2*time.Millisecond), `{"type":"usage","tabId":"`+tab+`","usage":{"inputTokens":1830,"outputTokens":212,"cacheReadTokens":1024,"cacheWriteTokens":0}}`)
				b.frame(when.Add(-time.Millisecond), `{"type":"done","tabId":"`+tab+`","message":{"role":"assistant","chunks":[{"type":"text","text":"…"}]}}`)
			}
			sealed = ev.Type == "status" && ev.Status == StatusIdle
			b.frame(when, realShape(ev))
		case KindSend:
			answer := -1
			for j := k + 1; j < len(t.Records); j++ {
				if t.Records[j].Kind == KindHTTP && t.Records[j].ID == r.ID {
					answer = j
					break
				}
			}
			body := map[string]any{"tabId": tab, "message": r.Text}
			if optimistic(t, k) {
				body["queueId"] = r.ID
			}
			end, status, resp := when.Add(-time.Millisecond), 0, any(nil)
			if answer >= 0 {
				a := t.Records[answer]
				end, status, resp = recTime(answer), 200, map[string]any{"status": a.Status}
				switch a.Status {
				case "queued":
					resp = map[string]any{"status": "queued", "messageId": a.MessageID}
				case "error":
					status, resp = 500, map[string]any{"error": "agent unavailable"}
				}
			}
			b.request("POST", api+tab+"/messages", when, end, body, status, resp)
		case KindCancel:
			b.request("POST", api+tab+"/cancel", when, when.Add(5*time.Millisecond), map[string]any{"tabId": tab, "queueId": r.ID}, 200, map[string]any{"status": "ok"})
		case KindFetch:
			reqOf[k] = r.Req
			start := recTime(req[r.Req]).Add(time.Millisecond)
			if start.After(when) {
				start = when.Add(-time.Millisecond)
			}
			rows := r.Rows
			if rows == nil {
				rows = []Chunk{}
			}
			if r.FetchErr {
				b.request("GET", api+tab+"/chunks?limit=100", start, when, nil, 500, map[string]any{"error": "database is locked"})
			} else {
				b.request("GET", api+tab+"/chunks?limit=100", start, when, nil, 200, map[string]any{"chunks": rows, "hasMore": false})
			}
		}
	}
	// The second tab runs a turn of its own, interleaved; then the user
	// pages back through older history, and the socket carries a ping and
	// a binary frame, compaction and task-list frames.
	side := "t-side"
	mid := recTime(len(t.Records) / 2).Add(7 * time.Millisecond)
	for k, f := range []string{
		`{"type":"tab-created","tabId":"t-side","id":"t-side","title":"Side quest","keyId":"key-1","modelId":"deepseek-chat","parentTabId":null,"workingDirectory":"/home/dev/src/app"}`,
		`{"type":"turn-start","tabId":"t-side","turnId":"side-1"}`,
		`{"type":"status","tabId":"t-side","status":"running"}`,
		`{"type":"text-delta","tabId":"t-side","delta":"side answer"}`,
		`{"type":"compaction-started","tabId":"t-side"}`,
		`{"type":"compaction-complete","tabId":"t-side","summary":{"tokensBefore":90000,"tokensAfter":12000}}`,
		`{"type":"usage","tabId":"t-side","usage":{"inputTokens":900,"outputTokens":30,"cacheReadTokens":0,"cacheWriteTokens":0}}`,
		`{"type":"done","tabId":"t-side","message":{"role":"assistant","chunks":[{"type":"text","text":"side answer"}]}}`,
		`{"type":"status","tabId":"t-side","status":"idle"}`,
		`{"type":"turn-sealed","tabId":"t-side","turnId":"side-1","usageStats":null}`,
	} {
		b.frame(mid.Add(time.Duration(k)*100*time.Microsecond), f)
	}
	sideRows := []any{
		map[string]any{"id": "s0", "tabId": side, "seq": 0, "turnId": "side-1", "step": 0, "role": "user", "type": "text", "data": map[string]any{"text": "a side question"}, "createdAt": 1764496800000},
		map[string]any{"id": "s1", "tabId": side, "seq": 1, "turnId": "side-1", "step": 0, "role": "assistant", "type": "text", "data": map[string]any{"text": "side answer"}, "createdAt": 1764496800001},
	}
	b.request("GET", api+side+"/chunks?limit=100", mid.Add(time.Millisecond+50*time.Microsecond), mid.Add(3*time.Millisecond), nil, 200, map[string]any{"chunks": sideRows, "hasMore": false})
	end := recTime(len(t.Records))
	b.request("GET", api+tab+"/chunks?limit=100&before=0", end, end.Add(20*time.Millisecond), nil, 200, map[string]any{"chunks": []any{}, "hasMore": false})
	b.frame(end.Add(30*time.Millisecond), `ping`)
	b.frames = append(b.frames, harWSMessage{Type: "receive", Time: epoch(end.Add(31 * time.Millisecond)), Opcode: 2, Data: "AAECAw=="})
	b.frame(end.Add(32*time.Millisecond), `{"type":"task-list-update","tasks":[{"id":"task-1","title":"write tests","status":"done"}]}`)

	socket := harOutEntry{ResourceType: "websocket", StartedDateTime: socketOpen.Add(-50 * time.Millisecond).Format(time.RFC3339Nano), Time: 48.5,
		Request:  harOutRequest{Method: "GET", URL: "wss://" + b.host + "/api/v1/ws", HTTPVersion: "HTTP/1.1", Headers: []any{}, QueryString: []any{}, HeadersSize: -1, BodySize: 0},
		Response: harOutResponse{Status: 101, StatusText: "Switching Protocols", HTTPVersion: "HTTP/1.1", Headers: []any{}, Content: harOutContent{MimeType: "x-unknown"}, HeadersSize: -1, BodySize: 0},
		Messages: b.frames}
	entries := append([]harOutEntry{b.entries[0], b.entries[1], socket}, b.entries[2:]...)
	doc := harDoc{Log: harLog{Version: "1.2", Creator: map[string]any{"name": "WebInspector", "version": "537.36"},
		Pages:   []any{map[string]any{"startedDateTime": at(0).Format(time.RFC3339Nano), "id": "page_1", "title": "dsh", "pageTimings": map[string]any{"onContentLoad": 120.5, "onLoad": 180.2}}},
		Entries: entries}}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(out, '\n')
}

// optimistic reports whether the client queued the send at record k
// optimistically (it believed the agent running), as membership replays it.
func optimistic(t *Trace, k int) bool {
	m := newMachine(Membership, traceTab(t), NewBackend(t.Records, traceTab(t)), router(t.Records, nil))
	for i, r := range t.Records[:k] {
		m.apply(i, r)
	}
	return m.S.Status == StatusRunning
}

func captureName(tracePath string) string {
	return strings.TrimSuffix(filepath.Base(tracePath), ".jsonl") + ".har"
}

// TestCaptures: every committed capture is what buildCapture makes of its
// trace (rewrite with -update), and replays, tab by tab, to the verdicts of
// the trace it came from under membership and legacy: the trace's tab like
// the trace (without scroll records, which a capture cannot hold), the side
// tab passing. The traces --convert would write replay to the same verdicts.
func TestCaptures(t *testing.T) {
	for _, path := range traceFiles(t) {
		src := loadTrace(t, path)
		harPath := filepath.Join(capturesDir, captureName(path))
		built := buildCapture(src)
		if *update {
			if err := os.MkdirAll(capturesDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(harPath, built, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Run(captureName(path), func(t *testing.T) {
			committed, err := os.ReadFile(harPath)
			if err != nil {
				t.Fatalf("%v (run go test -run TestCaptures -update)", err)
			}
			if !bytes.Equal(committed, built) {
				t.Fatalf("%s is not what buildCapture makes of %s (run go test -run TestCaptures -update)", harPath, path)
			}
			traces, err := DecodeCapture(bytes.NewReader(committed), harPath)
			if err != nil {
				t.Fatal(err)
			}
			// A trace per tab: the trace's, t-side, and every other tab a
			// statuses frame names (replay.md: statuses goes to each).
			wantTabs := []string{traceTab(src), "t-side"}
			for _, r := range src.Records {
				if r.Kind == KindWS && r.Ev.Type == "statuses" {
					for id := range r.Ev.Statuses {
						wantTabs = append(wantTabs, id)
					}
				}
			}
			slices.Sort(wantTabs)
			wantTabs = slices.Compact(wantTabs)
			var gotTabs []string
			for _, tr := range traces {
				gotTabs = append(gotTabs, tr.Tab)
			}
			if !slices.Equal(gotTabs, wantTabs) {
				t.Fatalf("traces of tabs %v, want %v", gotTabs, wantTabs)
			}
			want := withoutScroll(src)
			for _, tr := range traces {
				if len(tr.Notes) == 0 {
					t.Errorf("tab %s: no notes about the noise left out", tr.Tab)
				}
				for _, pol := range []Policy{Membership, Legacy} {
					got := Run(tr, Options{Policy: pol})
					exp := Pass // t-side and tabs only a statuses frame names
					if tr.Tab == traceTab(src) {
						exp = Run(want, Options{Policy: pol}).Verdict
						if orig := Run(src, Options{Policy: pol}).Verdict; orig != exp {
							t.Logf("%s under %s: %s with scroll records, %s without", path, pol.Name, orig, exp)
						}
					}
					if got.Verdict != exp {
						t.Errorf("tab %s under %s: %s, want %s: %+v %v", tr.Tab, pol.Name, got.Verdict, exp, got.First(), got.Warnings)
					}
					// --convert: the trace written as JSONL replays alike.
					var buf bytes.Buffer
					if err := tr.Encode(&buf); err != nil {
						t.Fatal(err)
					}
					back, err := DecodeTrace(&buf, "converted")
					if err != nil {
						t.Fatal(err)
					}
					if v := Run(back, Options{Policy: pol}).Verdict; v != got.Verdict {
						t.Errorf("tab %s under %s: converted trace gives %s, the capture %s", tr.Tab, pol.Name, v, got.Verdict)
					}
				}
			}
		})
	}
}

// TestCaptureErrors: a file that is not a capture, a capture without
// WebSocket frames and one saved without response bodies are errors that
// name the file and what is missing.
func TestCaptureErrors(t *testing.T) {
	good := buildCapture(loadTrace(t, filepath.Join(tracesDir, "s1-seal-folds-live-turn.jsonl")))
	var doc map[string]any
	if err := json.Unmarshal(good, &doc); err != nil {
		t.Fatal(err)
	}
	entries := doc["log"].(map[string]any)["entries"].([]any)
	noSocket, noContent := []any{}, []any{}
	for _, e := range entries {
		em := e.(map[string]any)
		if _, ok := em["_webSocketMessages"]; !ok {
			noSocket = append(noSocket, e)
		}
		c := map[string]any{}
		for k, v := range em {
			c[k] = v
		}
		resp := map[string]any{}
		for k, v := range em["response"].(map[string]any) {
			resp[k] = v
		}
		content := map[string]any{}
		for k, v := range resp["content"].(map[string]any) {
			if k != "text" {
				content[k] = v
			}
		}
		resp["content"] = content
		c["response"] = resp
		noContent = append(noContent, c)
	}
	with := func(entries []any) string {
		return fmt.Sprintf(`{"log":{"version":"1.2","entries":%s}}`, mustMarshal(entries))
	}
	cases := []struct {
		name, in, want string
	}{
		{"not JSON", "GIF89a", "malformed JSON"},
		{"no log", `{"name":"dshctl","version":"1.0.0"}`, "not a HAR capture: no log.entries"},
		{"array", `[1,2]`, "not a HAR capture"},
		{"no socket", with(noSocket), "no WebSocket frames"},
		{"no content", with(noContent), "no response bodies"},
		{"truncated", string(good[:len(good)/2]), "malformed JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeCapture(strings.NewReader(c.in), "dir/x.har")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "dir/x.har: ") {
				t.Fatalf("error %v, want one naming dir/x.har and saying %q", err, c.want)
			}
		})
	}
}

// FuzzDecodeCapture: a capture is untrusted input; decoding and replaying it
// never panics, and what it decodes re-encodes as traces.
func FuzzDecodeCapture(f *testing.F) {
	f.Add(buildCapture(loadTrace(f, filepath.Join(tracesDir, "s5-consumed-interrupt-collapses.jsonl"))))
	f.Add([]byte(`{"log":{"entries":[{"_webSocketMessages":[{"type":"receive","time":1,"opcode":1,"data":"{\"type\":\"turn-start\",\"tabId\":\"t\",\"turnId\":\"a\"}"}]},{"startedDateTime":"2026-01-01T00:00:00Z","time":1,"request":{"method":"GET","url":"https://h/t/chunks"},"response":{"status":200,"content":{"size":9,"mimeType":"application/json","text":"{\"chunks\":[{\"tabId\":\"t\",\"turnId\":\"a\",\"role\":\"user\",\"seq\":0}]}"}}}]}}`))
	f.Add([]byte(`{"log":{"entries":[{"startedDateTime":"x","request":{"method":"POST","url":"::","postData":{"text":"{\"message\":1}"}}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		traces, err := DecodeCapture(bytes.NewReader(data), "fuzz.har")
		if err != nil {
			return
		}
		for _, tr := range traces {
			Run(tr, Options{})
			var buf bytes.Buffer
			if err := tr.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			if _, err := DecodeTrace(&buf, "again"); err != nil {
				t.Fatalf("re-decoding a converted trace: %v", err)
			}
		}
	})
}

// TestCaptureStatusesOnlyTab: a tab named only in a statuses snapshot is a
// trace of its own (replay.md: statuses goes to every tab it names), and
// the snapshot counts as its first frame: a chunk fetch after it is the
// tab's request, one before the socket is its history load (review-spec
// item 9).
func TestCaptureStatusesOnlyTab(t *testing.T) {
	b := &capBuilder{host: "dsh.example.test"}
	api := "/api/v1/tabs/"
	old := map[string]any{"id": "h0", "tabId": "t2", "seq": 0, "turnId": "old", "step": 0, "role": "user", "type": "text", "data": map[string]any{"text": "earlier"}, "createdAt": 1764496800000}
	b.request("GET", api+"t2/chunks?limit=100", at(100*time.Millisecond), at(180*time.Millisecond), nil, 200, map[string]any{"chunks": []any{old}, "hasMore": false})
	open := at(900 * time.Millisecond)
	b.frame(open.Add(time.Millisecond), `{"type":"statuses","statuses":{"t1":{"status":"idle"},"t2":{"status":"idle"}}}`)
	b.frame(open.Add(2*time.Millisecond), `{"type":"status","tabId":"t1","status":"idle"}`)
	row := map[string]any{"id": "r0", "tabId": "t2", "seq": 0, "turnId": "x", "step": 0, "role": "user", "type": "text", "data": map[string]any{"text": "hi"}, "createdAt": 1764496800000}
	b.request("GET", api+"t2/chunks?limit=100", open.Add(5*time.Millisecond), open.Add(9*time.Millisecond), nil, 200, map[string]any{"chunks": []any{row}, "hasMore": false})
	socket := harOutEntry{ResourceType: "websocket", StartedDateTime: open.Add(-50 * time.Millisecond).Format(time.RFC3339Nano), Time: 48.5,
		Request:  harOutRequest{Method: "GET", URL: "wss://" + b.host + "/api/v1/ws", HTTPVersion: "HTTP/1.1", Headers: []any{}, QueryString: []any{}, HeadersSize: -1},
		Response: harOutResponse{Status: 101, HTTPVersion: "HTTP/1.1", Headers: []any{}, Content: harOutContent{MimeType: "x-unknown"}, HeadersSize: -1},
		Messages: b.frames}
	doc := harDoc{Log: harLog{Version: "1.2", Entries: append([]harOutEntry{b.entries[0], socket}, b.entries[1:]...)}}
	traces, err := DecodeCapture(strings.NewReader(mustMarshal(doc)), "st.har")
	if err != nil {
		t.Fatal(err)
	}
	var tabs []string
	for _, tr := range traces {
		tabs = append(tabs, tr.Tab)
		for _, n := range tr.Notes {
			if strings.Contains(n, "no frame of its own") {
				t.Errorf("note %q", n)
			}
		}
	}
	if len(traces) != 2 || tabs[0] != "t1" || tabs[1] != "t2" {
		t.Fatalf("traces for tabs %v, want t1 and t2", tabs)
	}
	t2 := traces[1]
	var kinds []string
	for _, r := range t2.Records {
		kinds = append(kinds, r.Kind)
	}
	if len(t2.Records) != 2 || t2.Records[0].Kind != KindWS || t2.Records[0].Ev.Type != "statuses" ||
		t2.Records[1].Kind != KindFetch || t2.Records[1].Req != 1 || len(t2.Records[1].Rows) != 1 {
		t.Fatalf("t2 records %v", kinds)
	}
	if !slices.ContainsFunc(t2.Notes, func(n string) bool { return strings.Contains(n, "1 history load") }) {
		t.Errorf("the fetch before the socket is not left out as t2's history load: %v", t2.Notes)
	}
}

// socketHAR is a capture of one socket whose received text frames are
// frames (tab-created t1 first), and one asset.
func socketHAR(frames ...string) string {
	b := &capBuilder{host: "dsh.example.test"}
	b.frame(at(time.Second), `{"type":"tab-created","tabId":"t1","id":"t1"}`)
	for k, f := range frames {
		b.frame(at(time.Second+time.Duration(k+1)*100*time.Millisecond), f)
	}
	b.request("GET", "/assets/app.js", at(100*time.Millisecond), at(120*time.Millisecond), nil, 200, nil)
	socket := harOutEntry{ResourceType: "websocket", StartedDateTime: at(900 * time.Millisecond).Format(time.RFC3339Nano), Time: 1,
		Request:  harOutRequest{Method: "GET", URL: "wss://" + b.host + "/ws", Headers: []any{}, QueryString: []any{}},
		Response: harOutResponse{Status: 101, Headers: []any{}, Content: harOutContent{MimeType: "x-unknown"}},
		Messages: b.frames}
	return mustMarshal(harDoc{Log: harLog{Version: "1.2", Entries: append(b.entries, socket)}})
}

// TestCaptureFrameShapes: a frame of the chat protocol (a JSON object with
// a type) whose fields have other shapes than the server's is an error
// naming the frame, as the same frame in a trace file is; JSON without a
// type and text that is not JSON are noise, counted in the notes; an
// unknown type is a warning naming the frame in the HAR.
func TestCaptureFrameShapes(t *testing.T) {
	cases := []struct {
		name, frame string
		err         string // the error, or "" for a trace
		note        string // with no error: a note the trace carries
		warning     string // with no error: its only warning
	}{
		{name: "turnId a number", frame: `{"type":"turn-start","tabId":"t1","turnId":7}`,
			err: `x.har: 1 frame of the chat protocol cannot be read; the first, entry 1 frame 1 (received 2026-11-30T10:00:01.100Z), a "turn-start" frame: field turnId: unexpected number`},
		{name: "queued message an object", frame: `{"type":"message-queued","tabId":"t1","messageId":"q","message":{"text":"x"}}`,
			err: `a "message-queued" frame: field message: unexpected object`},
		{name: "tabId a number", frame: `{"type":"usage","tabId":5}`, err: `a "usage" frame: field tabId: unexpected number`},
		{name: "unknown type, tabId a number", frame: `{"type":"brand-new","tabId":5}`, err: `a "brand-new" frame: field tabId`},
		{name: "JSON without type", frame: `{"ping":1}`, note: "1 JSON without a type"},
		{name: "type not a string", frame: `{"type":5,"tabId":"t1"}`, note: "1 JSON without a type"},
		{name: "not JSON", frame: `ping`, note: "1 not JSON"},
		{name: "unknown type", frame: `{"type":"brand-new","tabId":"t1"}`,
			warning: `entry 1 frame 1 (received 2026-11-30T10:00:01.100Z): unknown event type "brand-new"; skipped`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			traces, err := DecodeCapture(strings.NewReader(socketHAR(c.frame)), "x.har")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || len(traces) != 1 {
				t.Fatalf("%d traces, %v", len(traces), err)
			}
			res := Run(traces[0], Options{})
			if c.note != "" && !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, c.note) }) {
				t.Errorf("notes %q, want one saying %q", res.Notes, c.note)
			}
			if want := []string{c.warning}; c.warning != "" && !slices.Equal(res.Warnings, want) || c.warning == "" && len(res.Warnings) > 0 {
				t.Errorf("warnings %q, want %q", res.Warnings, c.warning)
			}
			// The asset is an other request, said so (README).
			if !slices.Contains(res.Notes, "capture: 1 other request ignored (not a send, a cancel or a chunk fetch: assets, other API calls)") {
				t.Errorf("notes %q: the asset is not counted", res.Notes)
			}
		})
	}
}

// TestCaptureFileErrors: an empty file, a truncated one and a byte order
// mark are told apart from other malformed JSON, at the right offset.
func TestCaptureFileErrors(t *testing.T) {
	good := socketHAR(`{"type":"turn-start","tabId":"t1","turnId":"a"}`)
	cases := []struct{ name, in, err string }{
		{"empty", "", "x.har: not a HAR capture: the file is empty"},
		{"blank", " \n\t\n", "x.har: not a HAR capture: the file is empty"},
		{"bom only", "\xef\xbb\xbf", "x.har: not a HAR capture: the file is empty"},
		{"truncated in an entry", good[:len(good)-40], fmt.Sprintf("x.har: malformed JSON: the file ends at byte %d, inside log.entries[1] (cut short?)", len(good)-40)},
		{"truncated after entries", good[:len(good)-2], fmt.Sprintf("x.har: malformed JSON: the file ends at byte %d (cut short?)", len(good)-2)},
		{"bom then truncated", "\xef\xbb\xbf" + good[:len(good)-40], fmt.Sprintf("x.har: malformed JSON: the file ends at byte %d, inside log.entries[1] (cut short?)", len(good)-37)},
		{"syntax error in an entry", strings.Replace(good, `"time":1,`, `"time":1,,`, 1), "x.har: malformed JSON in log.entries[1]: invalid character ','"},
		{"syntax error at the top", `{"log" 5}`, "x.har: malformed JSON at byte "},
		{"not JSON", "<html>", "x.har: malformed JSON at byte 0: invalid character '<'"},
		{"bom", "\xef\xbb\xbf" + good, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeCapture(strings.NewReader(c.in), "x.har")
			switch {
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
				t.Fatalf("error %v, want %q", err, c.err)
			}
		})
	}
}

// TestCaptureSizeBound: what a capture's traces keep of it is bounded, and
// past the bound the capture is an error naming the entry, read no further
// (#24 item 7: a 500 MB capture took 2.1 GB).
func TestCaptureSizeBound(t *testing.T) {
	defer func(n int64) { maxCaptureKept = n }(maxCaptureKept)
	maxCaptureKept = 64 << 10
	var sb strings.Builder
	sb.WriteString(`{"log":{"entries":[`)
	for e := range 20 {
		if e > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"_webSocketMessages":[`)
		for k := range 100 {
			if k > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, `{"type":"receive","time":%d.5,"opcode":1,"data":"{\"type\":\"text-delta\",\"tabId\":\"t1\",\"delta\":\"%s\"}"}`, 1700000000+e*100+k, strings.Repeat("x", 40))
		}
		sb.WriteString(`]}`)
	}
	sb.WriteString(`]}}`)
	_, err := DecodeCapture(strings.NewReader(sb.String()), "big.har")
	if err == nil || !strings.Contains(err.Error(), "big.har: the capture's WebSocket frames, sends and chunk answers pass 0 MiB at log.entries[") {
		t.Fatalf("DecodeCapture: %v", err)
	}
	maxCaptureKept = 1 << 20
	if _, err := DecodeCapture(strings.NewReader(sb.String()), "big.har"); err != nil {
		t.Fatalf("under the bound: %v", err)
	}
}

package reconcile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// recordedSession builds a trace shaped like a captured session of turns
// turns: each a user message, a turn with reasoning, streamed text in small
// deltas, tool calls with results, usage frames and done, then the seal and
// the recorded chunk answer (the last 100 rows, as the server returns them).
// Every fourth turn a message is queued and interrupts it; every seventh,
// the user sends while the turn runs and it becomes a continuation.
func recordedSession(turns int) *Trace {
	var recs []Record
	recordedTurns(turns, func(r Record) { recs = append(recs, r) })
	return &Trace{Name: "recorded session", Tab: "tab-1", Records: recs}
}

// recordedTurns gives emit the records of recordedSession one at a time,
// holding none of them.
func recordedTurns(turns int, emit func(Record)) {
	tab := "tab-1"
	la := newLookahead()
	be := newBackend(la, tab)
	idx := 0 // records emitted
	add := func(r Record) {
		emit(r)
		be.Apply(idx, r)
		idx++
	}
	ws := func(ev *Event) {
		ev.TabID = tab
		ev.Raw = marshalFrame(ev)
		add(Record{Kind: KindWS, Ev: ev})
	}
	words := []string{"the ", "reconcile ", "keeps ", "every ", "live ", "row ", "that ", "has ", "a ", "reason ", "to ", "stay; ", "`go test` ", "passes.\n"}
	add(Record{Kind: KindWS, Ev: &Event{Type: "tab-created", TabID: tab, ID: tab, Raw: json.RawMessage(`{"type":"tab-created","tabId":"tab-1","id":"tab-1","title":"New chat","keyId":"k1","modelId":"deepseek-chat","parentTabId":null,"workingDirectory":"/home/u/src/app"}`)}})
	ws(&Event{Type: "status", Status: StatusIdle})
	req := 0
	cont := false
	for n := 1; n <= turns; n++ {
		turn := "turn-" + strconv.Itoa(n)
		if !cont {
			id := "m" + strconv.Itoa(n)
			add(Record{Kind: KindSend, ID: id, Text: fmt.Sprintf("please change step %d of the plan", n)})
			add(Record{Kind: KindHTTP, ID: id, Status: "ok"})
		}
		cont = false
		ws(&Event{Type: "turn-start", TurnID: turn})
		ws(&Event{Type: "status", Status: StatusRunning})
		for k := range 20 {
			ws(&Event{Type: "reasoning-delta", Delta: words[k%len(words)]})
		}
		ws(&Event{Type: "reasoning-end"})
		for step := range 3 {
			for k := range 40 {
				ws(&Event{Type: "text-delta", Delta: words[(k+step)%len(words)]})
			}
			call := fmt.Sprintf("call-%d-%d", n, step)
			ws(&Event{Type: "tool-call", ToolCall: &ToolCall{ID: call, Name: "read_file", Arguments: json.RawMessage(`{"path":"internal/reconcile/state.go"}`)}})
			if step == 1 && n%4 == 0 {
				q := "q" + strconv.Itoa(n)
				ws(&Event{Type: "message-queued", MessageID: q, Message: "also check the tests"})
			}
			ws(&Event{Type: "tool-result", ToolResult: &ToolResult{ToolCallID: call, Result: json.RawMessage(`"package reconcile\n\nimport (\n\t\"fmt\"\n)\n"`)}})
			if step == 1 && n%4 == 0 {
				ws(&Event{Type: "message-consumed", MessageIDs: []string{"q" + strconv.Itoa(n)}})
			}
			emit(Record{Kind: KindWS, Ev: &Event{Type: "usage", TabID: tab, Raw: json.RawMessage(`{"type":"usage","tabId":"tab-1","usage":{"inputTokens":5120,"outputTokens":380,"cacheReadTokens":4096,"cacheWriteTokens":0}}`)}})
			idx++
			ws(&Event{Type: "done"})
		}
		if n%7 == 0 {
			c := "c" + strconv.Itoa(n)
			la.serverQueued[c] = true
			add(Record{Kind: KindSend, ID: c, Text: "and then the docs"})
			add(Record{Kind: KindHTTP, ID: c, Status: "queued", MessageID: c})
			ws(&Event{Type: "message-queued", MessageID: c, Message: "and then the docs"})
		}
		ws(&Event{Type: "status", Status: StatusIdle})
		ws(&Event{Type: "turn-sealed", TurnID: turn})
		req++
		add(Record{Kind: KindFetch, Req: req, Rows: be.Rows(), HasRows: true})
		if n%7 == 0 {
			ws(&Event{Type: "message-consumed", MessageIDs: []string{"c" + strconv.Itoa(n)}, Reason: "continuation"})
			cont = true
		}
		// No later record names this turn's messages or the turn before:
		// the model that writes the answers forgets them, so that making
		// a long session holds no more than replaying it.
		for _, id := range []string{"m", "q", "c"} {
			delete(be.texts, id+strconv.Itoa(n))
			delete(la.serverQueued, id+strconv.Itoa(n))
		}
		delete(be.started, "turn-"+strconv.Itoa(n-1))
	}
}

// marshalFrame is json.Marshal(ev) for the frames recordedTurns makes,
// written by hand (TestRecordedSessionEncodesAsJSON): a long session is
// made as fast as it is replayed.
func marshalFrame(ev *Event) []byte {
	if ev.MessageIDs != nil || ev.Error != nil || ev.Statuses != nil || !htmlFree(ev) {
		b, err := json.Marshal(ev)
		if err != nil {
			panic(err)
		}
		return b
	}
	b := make([]byte, 0, 64+len(ev.Delta)+len(ev.Message))
	sep := byte('{')
	str := func(name, v string) {
		if v != "" {
			b = append(append(append(b, sep, '"'), name...), '"', ':')
			b = appendJSONString(b, v)
			sep = ','
		}
	}
	str("type", ev.Type)
	str("tabId", ev.TabID)
	str("id", ev.ID)
	str("turnId", ev.TurnID)
	str("status", ev.Status)
	str("delta", ev.Delta)
	str("data", ev.Data)
	str("stream", ev.Stream)
	str("message", ev.Message)
	str("messageId", ev.MessageID)
	str("reason", ev.Reason)
	str("modelId", ev.ModelID)
	if tc := ev.ToolCall; tc != nil {
		b = append(b, sep)
		b = append(b, `"toolCall":{"id":`...)
		b = appendJSONString(b, tc.ID)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, tc.Name)
		if len(tc.Arguments) > 0 {
			b = append(append(b, `,"arguments":`...), tc.Arguments...)
		}
		b = append(b, '}')
		sep = ','
	}
	if tr := ev.ToolResult; tr != nil {
		b = append(b, sep)
		b = append(b, `"toolResult":{"toolCallId":`...)
		b = appendJSONString(b, tr.ToolCallID)
		if len(tr.Result) > 0 {
			b = append(append(b, `,"result":`...), tr.Result...)
		}
		if tr.IsError {
			b = append(b, `,"isError":true`...)
		}
		b = append(b, '}')
		sep = ','
	}
	if sep == '{' {
		b = append(b, '{')
	}
	return append(b, '}')
}

// htmlFree reports whether nothing in ev is one of the characters
// json.Marshal escapes and appendJSONString leaves, or a raw value
// json.Marshal would compact.
func htmlFree(ev *Event) bool {
	for _, s := range []string{ev.Type, ev.TabID, ev.ID, ev.TurnID, ev.Status, ev.Delta, ev.Data, ev.Stream, ev.Message, ev.MessageID, ev.Reason, ev.ModelID} {
		if strings.ContainsAny(s, "<>&") {
			return false
		}
	}
	if tc := ev.ToolCall; tc != nil && (strings.ContainsAny(tc.ID+tc.Name+string(tc.Arguments), "<>&") || !rawjson.IsCompact(tc.Arguments)) {
		return false
	}
	if tr := ev.ToolResult; tr != nil && (strings.ContainsAny(tr.ToolCallID+string(tr.Result), "<>&") || !rawjson.IsCompact(tr.Result)) {
		return false
	}
	return true
}

// writeRecorded writes the recorded session of turns turns named name as a
// JSONL trace, as it is made: the bytes encoding/json would write for each
// record (TestRecordedSessionEncodesAsJSON), a fetch record's rows encoded
// once each rather than in every answer that shows them.
func writeRecorded(w io.Writer, name string, turns int) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	err := enc.Encode(map[string]any{"k": KindMeta, "version": 1, "tab": "tab-1", "name": name})
	rows := map[string][]byte{} // row id -> its encoding, for the rows of the last answers
	var line []byte
	recordedTurns(turns, func(r Record) {
		if err != nil {
			return
		}
		switch r.Kind {
		case KindWS:
			line = append(append(append(line[:0], `{"k":"ws","ev":`...), r.Ev.Raw...), "}\n"...)
		case KindFetch:
			line = append(strconv.AppendInt(append(line[:0], `{"k":"fetch","req":`...), int64(r.Req), 10), `,"rows":[`...)
			seen := make(map[string][]byte, len(r.Rows))
			for k, c := range r.Rows {
				row, ok := rows[c.ID]
				if !ok {
					var e error
					if row, e = json.Marshal(c); e != nil {
						err = e
						return
					}
				}
				seen[c.ID] = row
				if k > 0 {
					line = append(line, ',')
				}
				line = append(line, row...)
			}
			rows = seen
			line = append(line, "]}\n"...)
		default:
			err = enc.Encode(r.wire())
			return
		}
		_, err = bw.Write(line)
	})
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// TestRecordedSessionEncodesAsJSON: writeRecorded writes what encoding/json
// writes for each record, and its frames are json.Marshal's.
func TestRecordedSessionEncodesAsJSON(t *testing.T) {
	var fast, slow bytes.Buffer
	if err := writeRecorded(&fast, "s", 30); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&slow)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"k": KindMeta, "version": 1, "tab": "tab-1", "name": "s"}); err != nil {
		t.Fatal(err)
	}
	frames := 0
	recordedTurns(30, func(r Record) {
		if r.Kind == KindWS && r.Ev.Type != "tab-created" && r.Ev.Type != "usage" {
			frames++
			ev := *r.Ev
			ev.Raw = nil
			if want, err := json.Marshal(&ev); err != nil || !bytes.Equal(r.Ev.Raw, want) {
				t.Fatalf("frame %s, json.Marshal %s (%v)", r.Ev.Raw, want, err)
			}
		}
		if err := enc.Encode(r.wire()); err != nil {
			t.Fatal(err)
		}
	})
	if frames < 1000 || !bytes.Equal(fast.Bytes(), slow.Bytes()) {
		t.Fatalf("%d frames; writeRecorded wrote %d bytes unlike encoding/json's %d", frames, fast.Len(), slow.Len())
	}
}

// encodeDecode returns t as it reads back from its JSONL encoding, and the bytes.
func encodeDecode(tb testing.TB, t *Trace) (*Trace, []byte) {
	var buf bytes.Buffer
	if err := t.Encode(&buf); err != nil {
		tb.Fatal(err)
	}
	b := buf.Bytes()
	back, err := DecodeTrace(bytes.NewReader(b), "bench")
	if err != nil {
		tb.Fatal(err)
	}
	return back, b
}

var (
	recordedOut   = flag.String("recorded-session", "", "write the benchmarks' recorded session to `FILE` (scripts/bench-replay.sh)")
	recordedTurnN = flag.Int("recorded-turns", 200, "turns of the session -recorded-session writes (about 160 records each)")
)

// TestWriteRecordedSession writes the recorded session the benchmarks
// replay, for the command-line measurement; it does nothing without
// -recorded-session.
func TestWriteRecordedSession(t *testing.T) {
	if *recordedOut == "" {
		t.Skip("no -recorded-session FILE")
	}
	// Written as it is made: a session of millions of records is never
	// held (a FIFO works too).
	f, err := os.Create(*recordedOut)
	if err != nil {
		t.Fatal(err)
	}
	err = writeRecorded(f, fmt.Sprintf("recorded session, %d turns", *recordedTurnN), *recordedTurnN)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestRecordedSessionPasses(t *testing.T) {
	tr, _ := encodeDecode(t, recordedSession(30))
	for _, pol := range []Policy{Membership, Legacy} {
		if res := Run(tr, Options{Policy: pol}); res.Verdict != Pass || res.Reconciles != 30 {
			t.Fatalf("%s: %s after %d reconciles: %+v %v", pol.Name, res.Verdict, res.Reconciles, res.First(), res.Warnings)
		}
	}
}

// BenchmarkReplayRecorded measures events per second through the machine
// and the checker on a recorded session of 200 turns (about 30,000 frames,
// fetches of 100 rows), decoded beforehand.
func BenchmarkReplayRecorded(b *testing.B) {
	tr, _ := encodeDecode(b, recordedSession(200))
	cpu := startCPU(b)
	for b.Loop() {
		if res := Run(tr, Options{}); res.Verdict != Pass {
			b.Fatal(res.Verdict)
		}
	}
	cpu.report(b, len(tr.Records), "events")
}

// cpuClock reports a benchmark's throughput per wall-clock second and per
// CPU second: the machine is shared, and the second says what the code costs.
type cpuClock struct{ start time.Duration }

func startCPU(b *testing.B) cpuClock {
	b.ResetTimer()
	return cpuClock{cpuTime()}
}

func (c cpuClock) report(b *testing.B, perOp int, unit string) {
	n := float64(perOp) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), unit+"/s")
	if used := cpuTime() - c.start; used > 0 {
		b.ReportMetric(n/used.Seconds(), unit+"/cpu-s")
	}
}

// BenchmarkDecodeAndReplayRecorded is BenchmarkReplayRecorded with the
// decoding of the JSONL file counted.
func BenchmarkDecodeAndReplayRecorded(b *testing.B) {
	tr, raw := encodeDecode(b, recordedSession(200))
	b.SetBytes(int64(len(raw)))
	cpu := startCPU(b)
	for b.Loop() {
		t, err := DecodeTrace(bytes.NewReader(raw), "bench")
		if err != nil {
			b.Fatal(err)
		}
		if res := Run(t, Options{}); res.Verdict != Pass {
			b.Fatal(res.Verdict)
		}
	}
	cpu.report(b, len(tr.Records), "events")
}

// BenchmarkMachine measures records per second through the machine and the
// checker (Run, deferral replay included), on generated traces.
func BenchmarkMachine(b *testing.B) {
	traces := make([]*Trace, 64)
	events := 0
	for i := range traces {
		traces[i] = Generate(99, i, Membership)
		events += len(traces[i].Records)
	}
	cpu := startCPU(b)
	for b.Loop() {
		for _, tr := range traces {
			Run(tr, Options{})
		}
	}
	cpu.report(b, events, "events")
}

// BenchmarkGenerate measures generated traces per second.
func BenchmarkGenerate(b *testing.B) {
	cpu := startCPU(b)
	i := 0
	for b.Loop() {
		Generate(99, i, Membership)
		i++
	}
	cpu.report(b, 1, "traces")
}

// BenchmarkGenerated is what --generate does per trace: generate, replay
// and check (shrinking only runs on a failure), on every core.
func BenchmarkGenerated(b *testing.B) {
	var next atomic.Int64
	cpu := startCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1) - 1)
			if res := Run(Generate(99, i, Membership), Options{}); res.Verdict != Pass {
				b.Errorf("gen-99-%d: %s", i, res.Verdict)
			}
		}
	})
	cpu.report(b, 1, "traces")
}

// BenchmarkDecodeRecorded measures decoding alone.
func BenchmarkDecodeRecorded(b *testing.B) {
	tr, raw := encodeDecode(b, recordedSession(200))
	b.SetBytes(int64(len(raw)))
	cpu := startCPU(b)
	for b.Loop() {
		if _, err := DecodeTrace(bytes.NewReader(raw), "bench"); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b, len(tr.Records), "events")
}

// BenchmarkReplayFile is what `dshctl replay session.jsonl` does with the
// recorded session: open the file, decode it, replay and check it.
func BenchmarkReplayFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "session.jsonl")
	tr, raw := encodeDecode(b, recordedSession(200))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	files := []File{{Path: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}
	b.SetBytes(int64(len(raw)))
	cpu := startCPU(b)
	for b.Loop() {
		suite, err := LoadSuite(files, Shard{})
		if err != nil {
			b.Fatal(err)
		}
		err = RunTraces(context.Background(), suite.Traces, Options{Policy: Membership}, 0, func(_ int, res Result) error {
			if res.Verdict != Pass {
				return errors.New(string(res.Verdict))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b, len(tr.Records), "events")
}

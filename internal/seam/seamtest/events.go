package seamtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// createdAt is the header time of every session the suite creates; event
// times follow it.
const createdAt = 1785331618000

func versionName(v int) string { return fmt.Sprintf("v%d", v) }

// header returns the header of a new unseeded session of version v.
func header(v int, id string) seam.Header {
	h := seam.Header{Version: v, ID: id, CreatedAt: createdAt, Cwd: "/home/dev/projects/demo-app", AgentPreset: "standard"}
	if v >= 2 {
		unseeded := false
		h.IsSeeded = &unseeded
	}
	return h
}

// script returns the first n events of a realistic conversation in format
// v, seqs 0 to n-1: turns that read a file through a tool call, and after
// every second turn a compaction whose user/message replaces the turns
// before it.
func script(v, n int) []seam.Event {
	out := make([]seam.Event, 0, n+11)
	add := func(typ, data, surfaceOp string, sources ...int64) int64 {
		seq := int64(len(out))
		e := seam.Event{Type: typ, Seq: seq, Time: createdAt + 500 + 37*seq, Data: []byte(data), SourceEventSeqs: sources}
		if surfaceOp != "" {
			e.SurfaceOp = []byte(surfaceOp)
		}
		out = append(out, e)
		return seq
	}
	for turn := 1; len(out) < n; turn++ {
		first := int64(len(out))
		call := fmt.Sprintf("call_%02d_read", turn)
		add("turn/start", fmt.Sprintf(`{"turn":%d}`, turn), "")
		add("user/message", fmt.Sprintf(`{"id":"u-%d","role":"user","content":[{"type":"text","text":"What does build.sh do? (%d)"}],"source":{"kind":"user"}}`, turn, turn), `"append"`)
		add("step/start", fmt.Sprintf(`{"turn":%d,"step":1}`, turn), "")
		add("assistant/message", fmt.Sprintf(`{"turn":%d,"step":1,"message":{"id":"a-%d","role":"assistant","content":[{"type":"tool-call","id":%q,"name":"read","arguments":"{\"path\":\"build.sh\"}"}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}}}`, turn, turn, call), `"append"`)
		callSeq := add("tool/call", fmt.Sprintf(`{"turn":%d,"step":1,"callId":%q,"name":"read","arguments":"{\"path\":\"build.sh\"}"}`, turn, call), "")
		result := fmt.Sprintf(`{"id":"r-%d","role":"user","source":{"kind":"tool","callId":%q},"content":[{"type":"tool-result","toolCallId":%[2]q,"content":"#!/bin/sh\nnpm ci && tsc -p tsconfig.build.json"}]}`, turn, call)
		if v >= 4 {
			result = fmt.Sprintf(`{"id":"r-%d","role":"tool","toolCallId":%q,"source":{"kind":"tool","callId":%[2]q},"content":[{"type":"text","text":"#!/bin/sh\nnpm ci && tsc -p tsconfig.build.json"}]}`, turn, call)
		}
		add("tool/result", fmt.Sprintf(`{"turn":%d,"step":1,"message":%s}`, turn, result), `"append"`, callSeq)
		add("step/end", fmt.Sprintf(`{"turn":%d,"step":1}`, turn), "")
		last := add("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn), "")
		if turn%2 != 0 {
			continue
		}
		// The replace cites the compaction first (not increasing: stored as
		// is); compaction/end cites the shadowed run (range pairs from v2).
		cmp := fmt.Sprintf(`"compactionId":"cmp-%d"`, turn)
		start := add("compaction/start", `{`+cmp+`,"turn":null}`, "")
		summary := add("compaction/summary", `{`+cmp+`,"summary":[{"type":"text","text":"Summary: build.sh installs and compiles."}]}`, "")
		startKey, endKey := "start", "end"
		if v >= 3 {
			startKey, endKey = "startSeq", "endSeq"
		}
		shadowed := seqRange(first, last)
		add("user/message", `{"content":[{"type":"text","text":"Summary: build.sh installs and compiles."}],"source":{"kind":"plugin","plugin":"compaction"}}`,
			fmt.Sprintf(`{"op":"replace",%q:%d,%q:%d}`, startKey, first, endKey, last), append([]int64{start, summary}, shadowed...)...)
		add("compaction/end", `{`+cmp+`,"turn":null}`, "", shadowed...)
	}
	return out[:n]
}

func seqRange(first, last int64) []int64 {
	var out []int64
	for s := first; s <= last; s++ {
		out = append(out, s)
	}
	return out
}

// records returns the physical records of events in a version-v log.
func records(v int, events []seam.Event) [][]byte {
	out := make([][]byte, len(events))
	for i := range events {
		out[i] = events[i].AppendRecordJSON(nil, v)
	}
	return out
}

// packedRecords returns packedLog as physical records and as the events
// they stand for.
func packedRecords(t *testing.T) (records [][]byte, events []seam.Event) {
	t.Helper()
	for _, line := range packedLog {
		records = append(records, []byte(line))
		rec, err := seam.DecodeRecord([]byte(line), 0)
		if err != nil {
			t.Fatalf("packedLog: %v", err)
		}
		events = append(events, rec.Events()...)
	}
	return records, events
}

// packedLog is a v0 body as dsh 0.1.0 writes it: packed chunk rows of every
// kind (a tool call with and without name, a negative time gap) between
// plain lines, ending with a packed row so that the event count comes from a
// packed row's member count. It holds packedLogEvents events.
var packedLog = strings.Split(strings.TrimSpace(`
{"type":"turn/start","seq":0,"time":1785331618512,"data":{"turn":1}}
{"type":"user/message","seq":1,"time":1785331618530,"data":{"id":"u-1","role":"user","content":[{"type":"text","text":"What does build.sh do?"}],"source":{"kind":"user"}},"surfaceOp":"append"}
{"type":"step/start","seq":2,"time":1785331618600,"data":{"turn":1,"step":1}}
{"type":"reasoning-chunks","seq0":3,"time0":1785331618665,"data":{"turn":1,"step":1,"index":0,"dt":[6,12],"texts":["The user want","s a summary"," of build.sh."]}}
{"type":"tool-call-chunks","seq0":6,"time0":1785331618868,"data":{"turn":1,"step":1,"index":1,"dt":[16,9,3],"id":"call_01_read","name":"read","args":["{\"p","ath\":\"","build.sh","\"}"]}}
{"type":"tool-call-chunks","seq0":10,"time0":1785331618900,"data":{"turn":1,"step":1,"index":2,"dt":[1,1],"id":"call_02_read","args":["{\"path\"",":\"READ","ME\"}"]}}
{"type":"assistant/message","seq":13,"time":1785331618950,"data":{"turn":1,"step":1,"message":{"id":"a-1","role":"assistant","content":[{"type":"tool-call","id":"call_01_read","name":"read","arguments":"{\"path\":\"build.sh\"}"}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}}},"sourceEventSeqs":[3,4,5,6,7,8,9,10,11,12],"surfaceOp":"append"}
{"type":"tool/call","seq":14,"time":1785331618951,"data":{"turn":1,"step":1,"callId":"call_01_read","name":"read","arguments":"{\"path\":\"build.sh\"}"}}
{"type":"tool/result","seq":15,"time":1785331618990,"data":{"turn":1,"step":1,"message":{"id":"r-1","role":"user","source":{"kind":"tool","callId":"call_01_read"},"content":[{"type":"tool-result","toolCallId":"call_01_read","content":"npm ci"}]}},"sourceEventSeqs":[14],"surfaceOp":"append"}
{"type":"step/end","seq":16,"time":1785331618991,"data":{"turn":1,"step":1}}
{"type":"step/start","seq":17,"time":1785331619000,"data":{"turn":1,"step":2}}
{"type":"text-chunks","seq0":18,"time0":1785331619172,"data":{"turn":1,"step":2,"index":0,"dt":[2,21,-1],"texts":["build.sh ","installs ","dependencies","."]}}
`), "\n")

const packedLogEvents = 22

package inspect

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/dshctl/dshctl/internal/rawjson"

	"github.com/dshctl/dshctl/internal/seam"
)

// Error codes of the synthetic tool results that close an interrupted turn.
const (
	// CodeToolOutcomeUnknown marks a call whose tool/call was recorded but
	// whose result was not: it may have run, so it must not be retried blindly.
	CodeToolOutcomeUnknown = "TOOL_OUTCOME_UNKNOWN"
	// CodeToolNotStarted marks a call the model requested that never reached
	// a recorded tool/call: it did not run.
	CodeToolNotStarted = "TOOL_NOT_STARTED"
)

// The model-visible texts of the synthetic results, exactly as dsh writes
// them: a resumed model reads them to decide whether to retry.
const (
	outcomeUnknownText = "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly."
	notStartedText     = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)

// PendingCall is a tool call of the open turn that has no result yet.
type PendingCall struct {
	CallID string `json:"callId"`
	Name   string `json:"name,omitempty"`
	// Step is the step whose assistant/message requested the call.
	Step int64 `json:"step"`
	// CallSeq is the seq of the call's tool/call event, -1 when none was
	// recorded (the call never started).
	CallSeq int64 `json:"callSeq"`
}

// Started reports whether the call's tool/call event was recorded.
func (p PendingCall) Started() bool { return p.CallSeq >= 0 }

// OpenTurn describes a turn/start without its turn/end.
type OpenTurn struct {
	Turn int64 `json:"turn"`
	// Step is the open step when StepOpen is set.
	Step     int64 `json:"step"`
	StepOpen bool  `json:"stepOpen"`
	// PendingCalls are in the order the model requested them.
	PendingCalls []PendingCall `json:"pendingCalls"`
}

// OpenTurnTracker follows a log event by event and knows, at every point,
// the open tail turn and the closers dsh's resume would append for it. Its
// memory is bounded by the open turn's pending calls.
//
// It follows dsh's recovery fold: calls are the tool-call blocks of
// assistant/message events; a tool/call marks a requested call as started; a
// tool/result settles a call; step/end, turn/start and turn/end forget every
// call, because dsh closes only the calls of the step left open.
type OpenTurnTracker struct {
	version  int
	open     bool
	turn     int64
	step     int64
	stepOpen bool
	pending  []PendingCall
	seen     bool
	lastSeq  int64
	lastTime int64
}

// NewOpenTurnTracker returns a tracker for a log of format version (which
// selects the shape of the synthetic tool results).
func NewOpenTurnTracker(version int) *OpenTurnTracker {
	return &OpenTurnTracker{version: version}
}

// Clone returns a copy of t that shares no state with it.
func (t *OpenTurnTracker) Clone() OpenTurnTracker {
	c := *t
	c.pending = slices.Clone(t.pending)
	return c
}

// Observe feeds the next event of the log, in seq order. A payload that
// does not decode is passed over, except that a turn/start or turn/end still
// opens or closes the turn.
func (t *OpenTurnTracker) Observe(e *seam.Event) {
	var f TurnFacts
	ReadFacts(e, &f)
	t.ObserveFacts(e, &f)
}

// ObserveFacts is Observe with the payload's facts read already.
func (t *OpenTurnTracker) ObserveFacts(e *seam.Event, f *TurnFacts) {
	t.seen, t.lastSeq, t.lastTime = true, e.Seq, e.Time
	switch e.Type {
	case typeTurnStart:
		t.open, t.turn, t.stepOpen, t.pending = true, f.Turn, false, t.pending[:0]
	case typeTurnEnd:
		t.open, t.stepOpen, t.pending = false, false, t.pending[:0]
	case typeStepStart:
		if !f.Bad && !f.BadTurn {
			t.step, t.stepOpen = f.Step, true
		}
	case typeStepEnd:
		t.stepOpen, t.pending = false, t.pending[:0]
	case typeAssistantMessage:
		// Only the tool-call blocks matter.
		if f.Bad {
			return
		}
		for _, c := range f.Calls {
			if i := t.find(c.ID); i >= 0 {
				t.pending[i].Step, t.pending[i].Name = f.Step, c.Name
			} else {
				t.pending = append(t.pending, PendingCall{CallID: c.ID, Name: c.Name, Step: f.Step, CallSeq: -1})
			}
		}
	case typeToolCall:
		if !f.Bad {
			if i := t.find(f.CallID); i >= 0 {
				t.pending[i].CallSeq = e.Seq
			}
		}
	case typeToolResult:
		if !f.Bad {
			if i := t.find(f.CallID); i >= 0 {
				t.pending = append(t.pending[:i], t.pending[i+1:]...)
			}
		}
	}
}

func (t *OpenTurnTracker) find(callID string) int {
	for i := range t.pending {
		if t.pending[i].CallID == callID {
			return i
		}
	}
	return -1
}

// OpenTurn returns the open tail turn so far, or nil when every turn is
// closed.
func (t *OpenTurnTracker) OpenTurn() *OpenTurn {
	if !t.open {
		return nil
	}
	return &OpenTurn{Turn: t.turn, Step: t.step, StepOpen: t.stepOpen,
		PendingCalls: append([]PendingCall{}, t.pending...)}
}

// Closers returns the events dsh's resume appends to close the open tail
// turn: an error tool/result per pending call, step/end if a step is open,
// then turn/end {reason:{kind:"interrupted"}}. They carry the last event's
// time and the seqs after it. No open turn gives nil.
func (t *OpenTurnTracker) Closers() []seam.Event {
	if !t.open || !t.seen {
		return nil
	}
	seq, time := t.lastSeq+1, t.lastTime
	out := make([]seam.Event, 0, len(t.pending)+2)
	for _, p := range t.pending {
		e := seam.Event{Type: typeToolResult, Seq: seq, Time: time,
			Data: t.toolResultData(p, seq), SurfaceOp: json.RawMessage(`"append"`)}
		if p.Started() {
			e.SourceEventSeqs = []int64{p.CallSeq}
		}
		out = append(out, e)
		seq++
	}
	if t.stepOpen {
		d := appendTurnStep(nil, t.turn)
		d = append(d, `,"step":`...)
		d = strconv.AppendInt(d, t.step, 10)
		out = append(out, seam.Event{Type: typeStepEnd, Seq: seq, Time: time, Data: append(d, '}')})
		seq++
	}
	d := appendTurnStep(nil, t.turn)
	d = append(d, `,"reason":{"kind":"interrupted"}}`...)
	return append(out, seam.Event{Type: typeTurnEnd, Seq: seq, Time: time, Data: d})
}

func appendTurnStep(dst []byte, turn int64) []byte {
	dst = append(dst, `{"turn":`...)
	return strconv.AppendInt(dst, turn, 10)
}

// toolResultData builds the payload of the synthetic result for p at seq, in
// the message shape of the tracker's format version: v0–v3 a user message
// holding a tool-result block, v4 a tool message.
func (t *OpenTurnTracker) toolResultData(p PendingCall, seq int64) json.RawMessage {
	text, name, code := notStartedText, "ToolNotStartedError", CodeToolNotStarted
	if p.Started() {
		text, name, code = outcomeUnknownText, "ToolOutcomeUnknownError", CodeToolOutcomeUnknown
	}
	d := appendTurnStep(nil, t.turn)
	d = append(d, `,"step":`...)
	d = strconv.AppendInt(d, p.Step, 10)
	d = append(d, `,"message":{"id":`...)
	d = rawjson.AppendString(d, "interrupted-tool-result-"+p.CallID+"-"+strconv.FormatInt(seq, 10))
	if t.version >= 4 {
		d = append(d, `,"role":"tool","toolCallId":`...)
		d = rawjson.AppendString(d, p.CallID)
		d = append(d, `,"isError":true`...)
	} else {
		d = append(d, `,"role":"user"`...)
	}
	d = append(d, `,"source":{"kind":"tool","callId":`...)
	d = rawjson.AppendString(d, p.CallID)
	d = append(d, `},"content":[`...)
	if t.version < 4 {
		d = append(d, `{"type":"tool-result","toolCallId":`...)
		d = rawjson.AppendString(d, p.CallID)
		d = append(d, `,"isError":true,"content":[`...)
	}
	d = append(d, `{"type":"text","text":`...)
	d = rawjson.AppendString(d, text)
	d = append(d, '}')
	if t.version < 4 {
		d = append(d, "]}"...)
	}
	d = append(d, `]},"error":{"name":`...)
	d = rawjson.AppendString(d, name)
	d = append(d, `,"code":`...)
	d = rawjson.AppendString(d, code)
	return append(d, "}}"...)
}

// Closers returns the closers for h's open tail turn (see
// OpenTurnTracker.Closers). It walks back from the tail to the last turn
// boundary, then reads forward from there: the cost is the open turn, not
// the log.
func Closers(ctx context.Context, h seam.Handle) ([]seam.Event, error) {
	return ClosersAfter(ctx, h, nil)
}

// ClosersAfter returns the closers for the turn that h's log followed by
// more (events about to be appended, numbered after it) leaves open: what
// makes the log end in a closed turn once more is appended.
func ClosersAfter(ctx context.Context, h seam.Handle, more []seam.Event) ([]seam.Event, error) {
	from := int64(-1)
	for e, err := range h.Scan(ctx, seam.ScanOptions{Reverse: true}) {
		if err != nil {
			return nil, err
		}
		if e.Type == typeTurnEnd {
			break
		}
		if e.Type == typeTurnStart {
			from = e.Seq
			break
		}
	}
	t := NewOpenTurnTracker(h.Header().Version)
	if from >= 0 {
		for e, err := range h.Scan(ctx, seam.ScanOptions{From: from}) {
			if err != nil {
				return nil, err
			}
			t.Observe(&e)
		}
	}
	for i := range more {
		t.Observe(&more[i])
	}
	return t.Closers(), nil
}

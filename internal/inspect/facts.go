package inspect

import (
	"encoding/json"

	"github.com/dshctl/dshctl/internal/seam"
)

// turnFacts is what the open-turn fold and verify's turn rules read of an
// event's payload: a skim of the JSON (seam.LookupAll), not a decode,
// since they look at every payload of a log, tool results of hundreds of
// KiB among them.
type turnFacts struct {
	turn, step       int64
	hasTurn, hasStep bool
	// callID is a tool/call's callId, or the call a tool/result settles.
	callID string
	// calls are the tool-call blocks of an assistant/message.
	calls []callRef
	// bad is set when a member the fold reads (but turn) has the wrong
	// JSON type, badTurn when turn has: the payload is then passed over,
	// as a failed decode would be.
	bad, badTurn bool

	vals [6]json.RawMessage
}

type callRef struct{ id, name string }

var (
	dataKeys    = []string{"turn", "step", "message", "callId", "name", "arguments"}
	messageKeys = []string{"content", "source", "toolCallId"}
	blockKeys   = []string{"type", "id", "name"}
	sourceKeys  = []string{"callId", "kind", "plugin"}
)

// readFacts fills f from e, for the event types the fold interprets; it
// reuses f.calls. Each object is skimmed once.
func readFacts(e *seam.Event, f *turnFacts) {
	*f = turnFacts{calls: f.calls[:0]}
	switch e.Type {
	case typeTurnStart, typeTurnEnd, typeStepStart, typeStepEnd, typeAssistantMessage, typeToolCall, typeToolResult:
	default:
		return
	}
	v := f.vals[:len(dataKeys)]
	seam.LookupAll(e.Data, dataKeys, v)
	f.turn, f.hasTurn = f.int(v[0])
	f.badTurn, f.bad = f.bad, false
	f.step, f.hasStep = f.int(v[1])
	if e.Type != typeStepStart && e.Type != typeAssistantMessage {
		f.bad = false // only these payloads were decoded with their step
	}
	msg, callID := f.object(v[2]), v[3]
	switch e.Type {
	case typeAssistantMessage:
		v = f.vals[:len(messageKeys)]
		seam.LookupAll(msg, messageKeys, v)
		content := v[0]
		if content == nil || string(content) == "null" {
			return
		}
		if !seam.Elements(content, func(block []byte) bool {
			if string(block) == "null" {
				return true // decodes as an empty block
			}
			if block[0] != '{' {
				f.bad = true
				return false
			}
			bv := f.vals[:len(blockKeys)]
			seam.LookupAll(block, blockKeys, bv)
			typ, id, name := f.string(bv[0]), f.string(bv[1]), f.string(bv[2])
			if typ == "tool-call" {
				f.calls = append(f.calls, callRef{id: id, name: name})
			}
			return true
		}) {
			f.bad = true
		}
	case typeToolCall:
		f.callID = f.string(callID)
		f.string(v[4]) // name and arguments are strings too
		f.string(v[5])
	case typeToolResult:
		v = f.vals[:len(messageKeys)]
		seam.LookupAll(msg, messageKeys, v)
		source, toolCallID := f.object(v[1]), v[2]
		id := f.string(toolCallID)
		seam.LookupAll(source, sourceKeys, f.vals[:len(sourceKeys)])
		f.string(f.vals[1]) // kind and plugin are strings too
		f.string(f.vals[2])
		if f.callID = f.string(f.vals[0]); f.callID == "" {
			f.callID = id
		}
	}
}

// int reads a member's value as an integer; a value of another type makes
// the payload bad (null reads as absent, as encoding/json has it).
func (f *turnFacts) int(v []byte) (int64, bool) {
	if v == nil || string(v) == "null" {
		return 0, false
	}
	n, ok := seam.IntValue(v)
	if !ok {
		f.bad = true
	}
	return n, ok
}

func (f *turnFacts) string(v []byte) string {
	if v == nil || string(v) == "null" {
		return ""
	}
	s, ok := seam.StringValue(v)
	if !ok {
		f.bad = true
	}
	return s
}

func (f *turnFacts) object(v []byte) []byte {
	if v == nil || string(v) == "null" {
		return nil
	}
	if v[0] != '{' {
		f.bad = true
		return nil
	}
	return v
}

package inspect

import (
	"encoding/json"

	"github.com/dshctl/dshctl/internal/rawjson"

	"github.com/dshctl/dshctl/internal/seam"
)

// TurnFacts is what the open-turn fold and verify's turn rules read of an
// event's payload: a skim of the JSON (rawjson.LookupAll), not a decode,
// since they look at every payload of a log, tool results of hundreds of
// KiB among them.
type TurnFacts struct {
	Turn, Step       int64
	HasTurn, HasStep bool
	// CallID is a tool/call's callId, or the call a tool/result settles.
	CallID string
	// Calls are the tool-call blocks of an assistant/message.
	Calls []CallRef
	// Bad is set when a member the fold reads (but turn) has the wrong
	// JSON type, BadTurn when turn has: the payload is then passed over,
	// as a failed decode would be.
	Bad, BadTurn bool

	vals [6]json.RawMessage
}

// CallRef is a tool-call block of an assistant/message.
type CallRef struct{ ID, Name string }

var (
	dataKeys    = []string{"turn", "step", "message", "callId", "name", "arguments"}
	messageKeys = []string{"content", "source", "toolCallId"}
	blockKeys   = []string{"type", "id", "name"}
	sourceKeys  = []string{"callId", "kind", "plugin"}
)

// ReadFacts fills f from e, for the event types the fold interprets; it
// reuses f.Calls. Each object is skimmed once.
func ReadFacts(e *seam.Event, f *TurnFacts) {
	*f = TurnFacts{Calls: f.Calls[:0]}
	switch e.Type {
	case typeTurnStart, typeTurnEnd, typeStepStart, typeStepEnd, typeAssistantMessage, typeToolCall, typeToolResult:
	default:
		return
	}
	v := f.vals[:len(dataKeys)]
	rawjson.LookupAll(e.Data, dataKeys, v)
	f.Turn, f.HasTurn = f.int(v[0])
	f.BadTurn, f.Bad = f.Bad, false
	f.Step, f.HasStep = f.int(v[1])
	if e.Type != typeStepStart && e.Type != typeAssistantMessage {
		f.Bad = false // only these payloads were decoded with their step
	}
	// Only the payloads that hold a message decode it: a step/start's
	// stray "message" does not make it bad.
	var msg []byte
	if e.Type == typeAssistantMessage || e.Type == typeToolResult {
		msg = f.object(v[2])
	}
	callID := v[3]
	switch e.Type {
	case typeAssistantMessage:
		v = f.vals[:len(messageKeys)]
		rawjson.LookupAll(msg, messageKeys, v)
		content := v[0]
		if content == nil || string(content) == "null" {
			return
		}
		if !rawjson.Elements(content, func(block []byte) bool {
			if string(block) == "null" {
				return true // decodes as an empty block
			}
			if block[0] != '{' {
				f.Bad = true
				return false
			}
			bv := f.vals[:len(blockKeys)]
			rawjson.LookupAll(block, blockKeys, bv)
			typ, id, name := f.string(bv[0]), f.string(bv[1]), f.string(bv[2])
			if typ == "tool-call" {
				f.Calls = append(f.Calls, CallRef{ID: id, Name: name})
			}
			return true
		}) {
			f.Bad = true
		}
	case typeToolCall:
		f.CallID = f.string(callID)
		f.string(v[4]) // name and arguments are strings too
		f.string(v[5])
	case typeToolResult:
		v = f.vals[:len(messageKeys)]
		rawjson.LookupAll(msg, messageKeys, v)
		source, toolCallID := f.object(v[1]), v[2]
		id := f.string(toolCallID)
		rawjson.LookupAll(source, sourceKeys, f.vals[:len(sourceKeys)])
		f.string(f.vals[1]) // kind and plugin are strings too
		f.string(f.vals[2])
		if f.CallID = f.string(f.vals[0]); f.CallID == "" {
			f.CallID = id
		}
	}
}

// int reads a member's value as an integer; a value of another type makes
// the payload bad (null reads as absent, as encoding/json has it).
func (f *TurnFacts) int(v []byte) (int64, bool) {
	if v == nil || string(v) == "null" {
		return 0, false
	}
	n, ok := rawjson.IntValue(v)
	if !ok {
		f.Bad = true
	}
	return n, ok
}

func (f *TurnFacts) string(v []byte) string {
	if v == nil || string(v) == "null" {
		return ""
	}
	s, ok := rawjson.StringValue(v)
	if !ok {
		f.Bad = true
	}
	return s
}

func (f *TurnFacts) object(v []byte) []byte {
	if v == nil || string(v) == "null" {
		return nil
	}
	if v[0] != '{' {
		f.Bad = true
		return nil
	}
	return v
}

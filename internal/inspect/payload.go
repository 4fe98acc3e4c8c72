package inspect

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
)

// Event types this package interprets. Every other type is passed over.
const (
	typeTurnStart        = "turn/start"
	typeTurnEnd          = "turn/end"
	typeStepStart        = "step/start"
	typeStepEnd          = "step/end"
	typeUserMessage      = "user/message"
	typeAssistantMessage = "assistant/message"
	typeToolCall         = "tool/call"
	typeToolResult       = "tool/result"
	typeSessionTitle     = "session/title"
	typeEndSeed          = "session/end-seed"
	typeSystemMessage    = "system/message"
	typeDeveloperMessage = "developer/message"
	typeSubagent         = "subagent/descriptor"
)

// turnStep is the {turn, step} part of many payloads.
type turnStep struct {
	Turn int64 `json:"turn"`
	Step int64 `json:"step"`
}

// turnEnd is the payload of turn/end. Reason.Reason is the nested cause an
// aborted turn carries ({kind:"user"}); Reason.Error is an error turn's.
type turnEnd struct {
	Turn   int64 `json:"turn"`
	Reason struct {
		Kind   string `json:"kind"`
		Reason struct {
			Kind string `json:"kind"`
		} `json:"reason"`
		Error struct {
			Message string `json:"message"`
			Code    string `json:"code"`
		} `json:"error"`
	} `json:"reason"`
}

// block is one content block of a message; which fields are set depends on
// Type. Content is the nested content of a v0–v3 tool-result block.
type block struct {
	Type       string  `json:"type"`
	Text       string  `json:"text"`
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Arguments  string  `json:"arguments"`
	ToolCallID string  `json:"toolCallId"`
	IsError    bool    `json:"isError"`
	Content    []block `json:"content"`
}

// message is a surface message: a user/message payload, the message of an
// assistant/message or tool/result, in any format version. IsError is the
// v4 tool message's.
type message struct {
	Role string `json:"role"`
	msgHead
	IsError bool    `json:"isError"`
	Content []block `json:"content"`
}

// msgHead is a message without its content: where it came from and, for a
// tool result, the call it answers. The open-turn fold decodes only this of
// a result, so a large result's text is skipped, not unquoted.
type msgHead struct {
	// ToolCallID is the v4 tool message's call id.
	ToolCallID string `json:"toolCallId"`
	Source     struct {
		Kind   string `json:"kind"`
		CallID string `json:"callId"`
		Plugin string `json:"plugin"`
	} `json:"source"`
}

// callID is the id of the call a tool result answers.
func (h *msgHead) callID() string {
	if h.Source.CallID != "" {
		return h.Source.CallID
	}
	return h.ToolCallID
}

// decode unmarshals a payload into v (a pointer to a zero value) and
// reports whether it could. dsh writes content as an array of blocks; a
// content that is a plain string is read as one text block, by a slower
// second pass taken only when the first meets a type mismatch.
func decode(data []byte, v any) bool {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if err == nil || !errors.As(err, &te) {
		return err == nil
	}
	var tree any
	if json.Unmarshal(data, &tree) != nil {
		return false
	}
	norm, err := json.Marshal(textContent(tree))
	return err == nil && json.Unmarshal(norm, v) == nil
}

// textContent rewrites, in a decoded JSON tree, every string "content"
// member into an array holding one text block.
func textContent(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if s, ok := c.(string); ok && k == "content" {
				x[k] = []any{map[string]any{"type": "text", "text": s}}
			} else {
				x[k] = textContent(c)
			}
		}
	case []any:
		for i := range x {
			x[i] = textContent(x[i])
		}
	}
	return v
}

// assistantPayload is the payload of assistant/message.
type assistantPayload struct {
	Message     message `json:"message"`
	Interrupted bool    `json:"interrupted"`
}

// toolCallPayload is the payload of tool/call.
type toolCallPayload struct {
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// toolResultPayload is the payload of tool/result; Error is set on the
// synthetic results of a repair.
type toolResultPayload struct {
	Message message `json:"message"`
	Error   *struct {
		Name string `json:"name"`
		Code string `json:"code"`
	} `json:"error"`
}

// isHumanPrompt reports whether e is a user/message a person typed: its
// source kind is "user" (plugin-injected messages and tool results are not).
func isHumanPrompt(e *seam.Event) bool {
	return e.Type == typeUserMessage && seam.LookupStringIs(e.Data, "user", "source", "kind")
}

// The readers below take what encoding/json would decode into the payload
// structs above, member by member with seam.Lookup, so that a large payload
// is skipped over rather than decoded: a member read must be absent, null
// or of its Go type, or the payload does not decode. Keys are compared
// exactly, as dsh's JSON.parse and property access do.

// fields reads the members keys of the JSON object raw in one walk (see
// seam.Fields); ok is false when raw is not an object.
func fields(raw []byte, keys ...string) (vals [4]json.RawMessage, ok bool) {
	return vals, seam.Fields(raw, keys, vals[:len(keys)])
}

// typed reports whether a member value read by fields is absent, null or
// starts with one of the bytes of kinds: what encoding/json decodes into a
// field of the matching Go type.
func typed(v json.RawMessage, kinds string) bool {
	return v == nil || string(v) == "null" || strings.IndexByte(kinds, v[0]) >= 0
}

// present is v without null: nil when absent or null.
func present(v json.RawMessage) json.RawMessage {
	if string(v) == "null" {
		return nil
	}
	return v
}

// str decodes a member value read by fields into a Go string as
// encoding/json does ("" when absent or null); ok is false for any other
// type.
func str(v json.RawMessage) (string, bool) {
	if v = present(v); v == nil {
		return "", true
	}
	return seam.LookupString(v)
}

// integer decodes a member value read by fields into an int64 as
// encoding/json does (0 when absent or null).
func integer(v json.RawMessage) (int64, bool) {
	if v = present(v); v == nil {
		return 0, true
	}
	return seam.LookupInt(v)
}

// stringMember returns the string member key of the object raw; ok is
// false when the member has another type than string or null.
func stringMember(raw []byte, key string) (string, bool) {
	f, _ := fields(raw, key)
	return str(f[0])
}

// messageContent returns data.message.content of a message payload (nil
// when absent or null); ok is false when data.message is not an object or
// the content not an array of objects whose type, id and name are strings.
func messageContent(data []byte) (json.RawMessage, bool) {
	f, _ := fields(data, "message")
	msg := present(f[0])
	if !typed(msg, "{") || msg == nil {
		return nil, typed(msg, "{")
	}
	f, _ = fields(msg, "content")
	content := present(f[0])
	if !typed(content, "[") || content == nil {
		return nil, typed(content, "[")
	}
	ok := true
	seam.Items(content, func(b json.RawMessage) bool {
		if present(b) == nil {
			return true
		}
		if ok = b[0] == '{'; ok {
			f, _ := fields(b, "type", "id", "name")
			for _, v := range f[:3] {
				if !typed(v, `"`) {
					ok = false
				}
			}
		}
		return ok
	})
	return content, ok
}

// resultCallID returns the call a tool/result payload answers (msgHead's
// callID); ok is false when the payload does not decode as a msgHead.
func resultCallID(data []byte) (string, bool) {
	f, ok := fields(data, "message")
	msg := present(f[0])
	if !ok || !typed(msg, "{") {
		return "", false
	}
	if msg == nil {
		return "", true
	}
	f, _ = fields(msg, "toolCallId", "source")
	toolCallID, ok := str(f[0])
	src := present(f[1])
	if !ok || !typed(src, "{") {
		return "", false
	}
	callID := ""
	if src != nil {
		f, _ = fields(src, "callId", "kind", "plugin")
		var okID bool
		callID, okID = str(f[0])
		if !okID || !typed(f[1], `"`) || !typed(f[2], `"`) {
			return "", false
		}
	}
	if callID != "" {
		return callID, true
	}
	return toolCallID, true
}

package inspect

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/dshctl/dshctl/internal/rawjson"

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
	if e.Type != typeUserMessage {
		return false
	}
	// The payload was validated when it was read: skim it, do not parse it.
	src, _ := rawjson.Lookup(e.Data, "source")
	kind, ok := rawjson.Lookup(src, "kind")
	return ok && jsonStringIs(kind, "user")
}

// jsonStringIs reports whether the JSON value raw is the string s, which
// must be valid UTF-8 without U+FFFD (what decoding makes of bad bytes).
func jsonStringIs(raw json.RawMessage, s string) bool {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == s
	}
	var v string
	return json.Unmarshal(raw, &v) == nil && v == s
}

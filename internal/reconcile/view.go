package reconcile

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// ClientView is the client state in the projection of the reference
// client's recorded states (replay.md, "Reference states"): what the user
// sees (Render, top to bottom), the queue, LT, the agent's status, whether
// a row streams (CA), the chunk rows and the live rows. Two views with
// equal Render, Q, LT, Status and CA set-or-not show the user the same
// thing; row ids the client makes itself are not comparable.
type ClientView struct {
	Status string     `json:"status"`
	LT     *string    `json:"LT"`
	CA     *string    `json:"CA"`
	Q      []string   `json:"Q"`
	C      []string   `json:"C"`
	L      []LiveView `json:"L"`
	Render []string   `json:"render"`
}

// LiveView is a live row as the reference states show it.
type LiveView struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	TurnID    string `json:"turnId,omitempty"`
	Text      string `json:"text"`
	Streaming bool   `json:"streaming,omitempty"`
}

// failedSendText is what the shipped client shows for a send whose POST
// failed: an untagged assistant row (the fixtures' client answers HTTP 500).
const failedSendText = "[error] Failed to send message (HTTP 500)"

// View projects s as the reference client's states do.
func View(s *State) ClientView {
	v := ClientView{Status: s.Status, Q: []string{}, C: []string{}, L: []LiveView{}, Render: []string{}}
	if s.LT != "" {
		lt := s.LT
		v.LT = &lt
	}
	if s.CA != "" {
		ca := s.CA
		v.CA = &ca
	}
	for _, q := range s.Q {
		v.Q = append(v.Q, q.ID)
	}
	for i := range s.C {
		c := &s.C[i]
		v.C = append(v.C, strconv.FormatInt(c.Seq, 10)+":"+c.TurnID+":"+c.Role+":"+c.Type)
	}
	v.Render = renderChunks(v.Render, s.C)
	for _, m := range s.L {
		lv := LiveView{ID: m.ID, Role: m.Role, TurnID: m.TurnID, Text: liveText(m), Streaming: m.Streaming}
		if strings.HasPrefix(m.ID, errorRowPrefix) && m.Role == RoleSystem {
			lv.Role, lv.Text = RoleAssistant, failedSendText
		}
		v.L = append(v.L, lv)
		v.Render = append(v.Render, renderRow(lv.Role, lv.TurnID, lv.Text))
	}
	return v
}

// renderRow is one row of what the user sees: "role:turn:text", or
// "role:text" for a row without a turn.
func renderRow(role, turn, text string) string {
	if turn == "" {
		return role + ":" + text
	}
	return role + ":" + turn + ":" + text
}

// liveText is what a live row shows: its text, thinking and system parts
// in order, each run of tool calls as one "[tools a,b]" block, an error as
// "[error] " and the error as JavaScript prints it; tool results and shell
// output show nothing.
func liveText(m Message) string {
	var sb strings.Builder
	inTools := false
	for _, p := range m.Parts {
		switch p.Type {
		case "tool_call":
			if inTools {
				sb.WriteByte(',')
			} else {
				sb.WriteString("[tools ")
				inTools = true
			}
			sb.WriteString(p.Name)
			continue
		case "tool_result", "shell":
			continue
		}
		if inTools {
			sb.WriteByte(']')
			inTools = false
		}
		switch p.Type {
		case "error":
			sb.WriteString("[error] ")
			sb.WriteString(p.Name)
		case "system":
			sb.WriteString("[" + p.Name + "]")
		default:
			sb.WriteString(p.Text)
		}
	}
	if inTools {
		sb.WriteByte(']')
	}
	return sb.String()
}

// renderChunks appends what the chunk rows show: a user row each, and the
// other rows of a turn that follow one another as one assistant row whose
// text runs join and whose tool calls and results gather in one
// "[tools …]" block where the first of them stands.
func renderChunks(out []string, rows []Chunk) []string {
	type block struct {
		turn  string
		parts []string // text runs and the tools block, in order
		tools int      // index of the tools block in parts, -1 when none
		names []string
		text  bool // the last part is a text run
	}
	var cur *block
	flush := func() {
		if cur == nil {
			return
		}
		if cur.tools >= 0 {
			cur.parts[cur.tools] = "[tools " + strings.Join(cur.names, ",") + "]"
		}
		out = append(out, renderRow(RoleAssistant, cur.turn, strings.Join(cur.parts, "")))
		cur = nil
	}
	for i := range rows {
		c := &rows[i]
		if c.Role == RoleUser {
			flush()
			out = append(out, renderRow(RoleUser, c.TurnID, c.shown()))
			continue
		}
		if cur != nil && cur.turn != c.TurnID {
			flush()
		}
		if cur == nil {
			cur = &block{turn: c.TurnID, tools: -1}
		}
		switch c.Type {
		case "text", "thinking":
			t := dataString(c.Data, "text")
			if cur.text {
				cur.parts[len(cur.parts)-1] += t
			} else {
				cur.parts = append(cur.parts, t)
				cur.text = true
			}
		case "tool_call", "tool_result":
			// A result without its call (a window that starts
			// between them) still shows the block.
			if cur.tools < 0 {
				cur.tools = len(cur.parts)
				cur.parts = append(cur.parts, "")
				cur.text = false
			}
			if c.Type == "tool_call" {
				cur.names = append(cur.names, dataString(c.Data, "name"))
			}
		case "error":
			cur.parts = append(cur.parts, "[error] "+jsString(dataMember(c.Data, "text")))
			cur.text = false
		}
	}
	flush()
	return out
}

// dataMember returns the member name of the object data, or nil.
func dataMember(data []byte, name string) []byte {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || rawjson.Check(data) != nil {
		return nil
	}
	return member(data, name)
}

// dataString is member name of data when it is a string, else "" (as
// JavaScript joins undefined).
func dataString(data []byte, name string) string {
	if v := dataMember(data, name); v != nil && v[0] == '"' {
		return stringOf(v)
	}
	return ""
}

// jsString renders a JSON value as JavaScript's String() does: a string as
// itself, an object as "[object Object]", nothing as "undefined".
func jsString(v []byte) string {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0:
		return "undefined"
	case v[0] == '"':
		return stringOf(v)
	case v[0] == '{':
		return "[object Object]"
	case v[0] == '[':
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil {
			return string(v)
		}
		parts := make([]string, len(list))
		for i, x := range list {
			if s := bytes.TrimSpace(x); len(s) > 0 && s[0] != 'n' {
				parts[i] = jsString(s)
			}
		}
		return strings.Join(parts, ",")
	}
	return string(v)
}

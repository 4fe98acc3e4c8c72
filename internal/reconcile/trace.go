// Package reconcile models the dsh web client's queue, interrupt and reconcile
// path and checks recorded or generated event traces against the invariants of
// replay.md: no loss, no duplicate or linger, newer turn preserved, idempotent
// and deferral-safe reconciles.
//
// The package does no I/O except decoding and encoding traces; the CLI feeds it.
package reconcile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Record kinds of a trace file (field "k").
const (
	KindMeta   = "meta"
	KindWS     = "ws"
	KindSend   = "send"
	KindHTTP   = "http"
	KindCancel = "cancel"
	KindScroll = "scroll"
	KindFetch  = "fetch"
)

// maxLine bounds one trace line; a recorded fetch of 100 rows fits easily.
const maxLine = 16 << 20

// Trace is a decoded trace file.
type Trace struct {
	Name    string   // from the meta record, else the name given to DecodeTrace
	Tab     string   // the tab under test; empty means the first tabId seen
	Expect  string   // "pass" or "fail" as the meta record says; empty if absent
	Meta    *Meta    // the meta record, nil when the file has none
	Records []Record // every record after the meta record, in file order
}

// Meta is the optional first record of a trace. Extra carries the fields
// replay.md does not define (generators use it to say how to reproduce).
type Meta struct {
	Version int               `json:"version"`
	Tab     string            `json:"tab,omitempty"`
	Name    string            `json:"name,omitempty"`
	Expect  string            `json:"expect,omitempty"`
	Extra   map[string]string `json:"-"`
}

// Record is one line of a trace. Only the fields of its Kind are set.
type Record struct {
	Line int    // 1-based line in the source file; 0 for generated records
	Kind string // one of the Kind constants, or an unknown kind kept for the warning

	Ev *Event // ws

	ID        string // send, http, cancel
	Text      string // send
	Status    string // http: ok | queued | error
	MessageID string // http: the server's id when it queued the message
	Up        bool   // scroll

	Req      int     // fetch
	Rows     []Chunk // fetch rows when HasRows
	HasRows  bool    // fetch carried rows; false with !FetchErr means "ask the backend model"
	FetchErr bool    // fetch answered with an error
}

// Event is a WebSocket frame. Raw keeps the frame exactly as it came so that
// re-encoding a trace does not lose fields this model ignores.
type Event struct {
	Type       string                    `json:"type"`
	TabID      string                    `json:"tabId,omitempty"`
	ID         string                    `json:"id,omitempty"`
	TurnID     string                    `json:"turnId,omitempty"`
	Status     string                    `json:"status,omitempty"`
	Delta      string                    `json:"delta,omitempty"`
	Data       string                    `json:"data,omitempty"`
	Stream     string                    `json:"stream,omitempty"`
	Message    string                    `json:"message,omitempty"`
	MessageID  string                    `json:"messageId,omitempty"`
	MessageIDs []string                  `json:"messageIds,omitempty"`
	Reason     string                    `json:"reason,omitempty"`
	ToolCall   *ToolCall                 `json:"toolCall,omitempty"`
	ToolResult *ToolResult               `json:"toolResult,omitempty"`
	Error      json.RawMessage           `json:"error,omitempty"`
	Statuses   map[string]StatusSnapshot `json:"statuses,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// ToolCall is the toolCall field of a tool-call frame.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolResult is the toolResult field of a tool-result frame.
type ToolResult struct {
	ToolCallID string          `json:"toolCallId"`
	Result     json.RawMessage `json:"result,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
}

// StatusSnapshot is one tab's entry in a statuses frame.
type StatusSnapshot struct {
	Status             string  `json:"status"`
	CurrentChunks      []Chunk `json:"currentChunks,omitempty"`
	CurrentAssistantID string  `json:"currentAssistantId,omitempty"`
	CurrentTurnID      string  `json:"currentTurnId,omitempty"`
}

// Chunk is a durable row as the chunk endpoint returns it.
type Chunk struct {
	ID        string          `json:"id"`
	TabID     string          `json:"tabId"`
	Seq       int64           `json:"seq"`
	TurnID    string          `json:"turnId"`
	Step      int             `json:"step"`
	Role      string          `json:"role"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data,omitempty"`
	CreatedAt int64           `json:"createdAt"`
}

// wireRecord is the JSON shape shared by every record kind.
type wireRecord struct {
	K         string          `json:"k"`
	Ev        json.RawMessage `json:"ev,omitempty"`
	ID        string          `json:"id,omitempty"`
	Text      string          `json:"text,omitempty"`
	Status    string          `json:"status,omitempty"`
	MessageID string          `json:"messageId,omitempty"`
	Up        *bool           `json:"up,omitempty"`
	Req       int             `json:"req,omitempty"`
	Rows      *[]Chunk        `json:"rows,omitempty"`
	Error     bool            `json:"error,omitempty"`
}

// DecodeTrace reads a JSONL trace. name is used when the file has no meta
// record naming it. Malformed JSON is an error naming the line; unknown record
// kinds are kept so that Run can skip them with a warning.
func DecodeTrace(r io.Reader, name string) (*Trace, error) {
	t := &Trace{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var kind struct {
			K string `json:"k"`
		}
		if err := json.Unmarshal(b, &kind); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, jsonError(err))
		}
		if kind.K == KindMeta {
			if t.Meta != nil || len(t.Records) > 0 {
				return nil, fmt.Errorf("line %d: meta record must be the first record", line)
			}
			m, err := decodeMeta(b)
			if err != nil {
				return nil, fmt.Errorf("line %d: meta: %w", line, jsonError(err))
			}
			t.Meta = m
			if m.Name != "" {
				t.Name = m.Name
			}
			t.Tab, t.Expect = m.Tab, m.Expect
			continue
		}
		var w wireRecord
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, fmt.Errorf("line %d: %s record: %w", line, kind.K, jsonError(err))
		}
		rec, err := decodeRecord(w)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s record: %w", line, w.K, err)
		}
		rec.Line = line
		t.Records = append(t.Records, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", line+1, maxLine)
		}
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return t, nil
}

// jsonError words a decoding error for the user: malformed JSON as such, a
// value of the wrong type by its field rather than by this package's types.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("malformed JSON: %w", err)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("a record must be a JSON object, not %s", typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("field %s: unexpected %s", typ.Field, typ.Value)
	}
	return err
}

func decodeMeta(b []byte) (*Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range all {
		switch k {
		case "k", "version", "tab", "name", "expect":
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		if m.Extra == nil {
			m.Extra = map[string]string{}
		}
		m.Extra[k] = s
	}
	return &m, nil
}

func decodeRecord(w wireRecord) (Record, error) {
	rec := Record{Kind: w.K}
	switch w.K {
	case KindWS:
		if len(w.Ev) == 0 || string(w.Ev) == "null" {
			return rec, errors.New("missing ev")
		}
		var ev Event
		if err := json.Unmarshal(w.Ev, &ev); err != nil {
			return rec, fmt.Errorf("ev: %w", jsonError(err))
		}
		ev.Raw = append(json.RawMessage(nil), w.Ev...)
		rec.Ev = &ev
	case KindSend:
		rec.ID, rec.Text = w.ID, w.Text
	case KindHTTP:
		rec.ID, rec.Status, rec.MessageID = w.ID, w.Status, w.MessageID
	case KindCancel:
		rec.ID = w.ID
	case KindScroll:
		if w.Up == nil {
			return rec, errors.New("missing up")
		}
		rec.Up = *w.Up
	case KindFetch:
		if w.Req < 1 {
			return rec, fmt.Errorf("req %d: requests are numbered from 1", w.Req)
		}
		rec.Req, rec.FetchErr = w.Req, w.Error
		if w.Rows != nil {
			rec.Rows, rec.HasRows = *w.Rows, true
		}
	}
	return rec, nil
}

// Encode writes t as JSONL: a meta record, then one line per record. Decoding
// the output gives back the same records.
func (t *Trace) Encode(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	meta := map[string]any{"k": KindMeta, "version": 1}
	if t.Meta != nil {
		for k, v := range t.Meta.Extra {
			meta[k] = v
		}
	}
	if t.Name != "" {
		meta["name"] = t.Name
	}
	if t.Tab != "" {
		meta["tab"] = t.Tab
	}
	if t.Expect != "" {
		meta["expect"] = t.Expect
	}
	if err := enc.Encode(meta); err != nil {
		return fmt.Errorf("encode meta: %w", err)
	}
	for i, rec := range t.Records {
		if err := enc.Encode(rec.wire()); err != nil {
			return fmt.Errorf("encode record %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

func (rec Record) wire() wireRecord {
	w := wireRecord{K: rec.Kind}
	switch rec.Kind {
	case KindWS:
		w.Ev = rec.Ev.raw()
	case KindSend:
		w.ID, w.Text = rec.ID, rec.Text
	case KindHTTP:
		w.ID, w.Status, w.MessageID = rec.ID, rec.Status, rec.MessageID
	case KindCancel:
		w.ID = rec.ID
	case KindScroll:
		up := rec.Up
		w.Up = &up
	case KindFetch:
		w.Req, w.Error = rec.Req, rec.FetchErr
		if rec.HasRows {
			rows := rec.Rows
			if rows == nil {
				rows = []Chunk{}
			}
			w.Rows = &rows
		}
	}
	return w
}

// raw returns the frame's original bytes, or its encoding when it was built
// in memory (generated traces).
func (ev *Event) raw() json.RawMessage {
	if ev == nil {
		return nil
	}
	if len(ev.Raw) > 0 {
		return ev.Raw
	}
	b, err := json.Marshal(ev)
	if err != nil {
		// Every field of Event marshals; RawMessage fields come from valid JSON.
		return json.RawMessage(`{}`)
	}
	return b
}

// String renders a record as its trace line, for reports.
func (rec Record) String() string {
	b, err := json.Marshal(rec.wire())
	if err != nil {
		return rec.Kind
	}
	return string(b)
}

// textOf returns the text a chunk shows: every string inside its data, joined.
func textOf(data json.RawMessage) string {
	if len(data) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return string(data)
	}
	var sb strings.Builder
	collectStrings(v, &sb)
	return sb.String()
}

func collectStrings(v any, sb *strings.Builder) {
	switch x := v.(type) {
	case string:
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(x)
	case []any:
		for _, e := range x {
			collectStrings(e, sb)
		}
	case map[string]any:
		// Map order is random; the result is only searched, never compared.
		for _, e := range x {
			collectStrings(e, sb)
		}
	}
}

// userText returns the text of a user chunk: data.text when present.
func userText(c Chunk) string {
	var d struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(c.Data, &d) == nil && d.Text != nil {
		return *d.Text
	}
	return textOf(c.Data)
}

// rawText renders a JSON value as text: a string as itself, anything else as JSON.
func rawText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

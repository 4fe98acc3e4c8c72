// Package reconcile models the dsh web client's queue, interrupt and reconcile
// path and checks recorded, captured or generated event traces against the
// invariants of replay.md: no loss, no duplicate or linger, newer turn
// preserved, idempotent and deferral-safe reconciles.
//
// The package does no I/O except decoding and encoding traces and browser
// captures; the CLI feeds it.
package reconcile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
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

// Trace is a decoded trace file, or one tab of a capture.
type Trace struct {
	Name    string   // from the meta record, else the name given to DecodeTrace
	Source  string   // where the trace came from: a file, a capture, a generator seed
	Tab     string   // the tab under test; empty means the first tabId seen
	Expect  string   // "pass" or "fail" as the meta record says; empty if absent
	Meta    *Meta    // the meta record, nil when the file has none
	Records []Record // every record after the meta record, in file order
	Notes   []string // what an importer left out, for the report
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

	rows *rowSet // Rows indexed, shared by every replay of a decoded record
}

// rowSet returns the record's rows, indexed.
func (rec *Record) rowSet() *rowSet {
	if rec.rows != nil {
		return rec.rows
	}
	return newRowSet(rec.Rows)
}

// Event is a WebSocket frame: the fields the client model reads. Raw keeps
// the frame exactly as it came, so that re-encoding a trace loses nothing.
type Event struct {
	Type       string                    `json:"type"`
	TabID      string                    `json:"tabId,omitempty"`
	ID         string                    `json:"id,omitempty"`
	TurnID     string                    `json:"turnId,omitempty"`
	Status     string                    `json:"status,omitempty"`
	Delta      string                    `json:"delta,omitempty"`
	Data       string                    `json:"data,omitempty"`
	Stream     string                    `json:"stream,omitempty"`
	Message    string                    `json:"message,omitempty"` // message-queued: the text; notice: the text shown
	MessageID  string                    `json:"messageId,omitempty"`
	MessageIDs []string                  `json:"messageIds,omitempty"`
	Reason     string                    `json:"reason,omitempty"`
	ModelID    string                    `json:"modelId,omitempty"`
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

// Chunk is a durable row as the chunk endpoint returns it. Raw keeps the row
// as it came; text is what it shows, worked out once when the row is
// decoded (user and tool_result rows) or written by the backend model.
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

	Raw  json.RawMessage `json:"-"`
	text string
}

// Frame types, as replay.md lists them. withEffect: frames that change the
// client state; the others are known, accepted in any shape, and ignored.
var (
	withEffect = []string{"tab-created", "status", "turn-start", "text-delta", "reasoning-delta",
		"reasoning-end", "tool-call", "tool-result", "shell-output", "done", "error", "notice",
		"model-changed", "message-queued", "message-consumed", "message-cancelled", "turn-sealed", "statuses"}
	withoutEffect = []string{"usage", "permission-prompt", "task-list-update", "config-reload",
		"compaction-started", "compaction-complete", "compaction-error"}
)

// FrameTypes returns every frame type the replay knows.
func FrameTypes() []string {
	return append(append([]string(nil), withEffect...), withoutEffect...)
}

var knownFrame = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range FrameTypes() {
		m[t] = true
	}
	return m
}()

// DecodeTrace reads a JSONL trace. name is used when the file has no meta
// record naming it. Malformed JSON, a record without "k" and a ws record
// without ev.type are errors naming the line; unknown record kinds and frame
// types are kept so that Run can skip them with a warning; fields the model
// does not read are never checked.
func DecodeTrace(r io.Reader, name string) (*Trace, error) {
	t := &Trace{Name: name}
	d := &decoder{in: interner{}, rows: rowCache{}}
	var blocks [][]Record // filled blocks of records
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		rec, meta, err := d.line(b)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if meta != nil {
			if t.Meta != nil || len(t.Records) > 0 {
				return nil, fmt.Errorf("line %d: meta record must be the first record", line)
			}
			t.Meta = meta
			if meta.Name != "" {
				t.Name = meta.Name
			}
			t.Tab, t.Expect = meta.Tab, meta.Expect
			continue
		}
		rec.Line = line
		if len(t.Records) == cap(t.Records) {
			// Full: keep it and fill a new block; one copy joins them at
			// the end, instead of one per doubling.
			blocks = append(blocks, t.Records)
			t.Records = make([]Record, 0, min(2*cap(t.Records)+64, 1<<16))
		}
		t.Records = append(t.Records, rec)
	}
	if len(blocks) > 0 {
		n := len(t.Records)
		for _, b := range blocks {
			n += len(b)
		}
		all := make([]Record, 0, n)
		for _, b := range blocks {
			all = append(all, b...)
		}
		t.Records = append(all, t.Records...)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", line+1, maxLine)
		}
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return t, nil
}

// wireFields are the members of a record line, as raw values.
type wireFields struct {
	k, ev, id, text, status, messageID, up, req, rows, err []byte
}

// decoder decodes the lines of one trace, sharing what they repeat.
type decoder struct {
	in   interner
	rows rowCache
}

// line decodes one trace line: a record, or the meta record.
func (d *decoder) line(b []byte) (Record, *Meta, error) {
	if err := checkLine(b, d.rows); err != nil {
		return Record{}, nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if b[0] != '{' {
		return Record{}, nil, fmt.Errorf("a record must be a JSON object, not %s", kindOf(b))
	}
	in := d.in
	var w wireFields
	members(b, func(key, val []byte) {
		switch string(fieldName(key)) {
		case "k":
			w.k = val
		case "ev":
			w.ev = val
		case "id":
			w.id = val
		case "text":
			w.text = val
		case "status":
			w.status = val
		case "messageId":
			w.messageID = val
		case "up":
			w.up = val
		case "req":
			w.req = val
		case "rows":
			w.rows = val
		case "error":
			w.err = val
		}
	})
	if w.k == nil || w.k[0] == 'n' {
		return Record{}, nil, errors.New(`record without "k" (its kind)`)
	}
	kind, err := optString("k", w.k)
	if err != nil {
		return Record{}, nil, err
	}
	if kind == KindMeta {
		m, err := decodeMeta(b)
		if err != nil {
			return Record{}, nil, fmt.Errorf("meta: %w", err)
		}
		return Record{}, m, nil
	}
	rec, err := w.record(kind, in, d.rows)
	if err != nil {
		return Record{}, nil, fmt.Errorf("%s record: %w", kind, err)
	}
	return rec, nil, nil
}

// fieldName returns a raw object key as its name, decoding escapes and
// replacing invalid UTF-8 as encoding/json does.
func fieldName(key []byte) []byte {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return unquote(nil, key)
		}
	}
	return key
}

func (w *wireFields) record(kind string, in interner, cache rowCache) (Record, error) {
	rec := Record{Kind: kind}
	var err error
	switch kind {
	case KindWS:
		if w.ev == nil || w.ev[0] == 'n' {
			return rec, errors.New("missing ev")
		}
		rec.Ev, err = decodeEvent(bytes.Clone(w.ev), in)
		if err != nil {
			return rec, fmt.Errorf("ev: %w", err)
		}
	case KindSend:
		if rec.ID, err = optString("id", w.id); err == nil {
			rec.Text, err = optString("text", w.text)
		}
	case KindHTTP:
		if rec.ID, err = optString("id", w.id); err == nil {
			if rec.Status, err = optString("status", w.status); err == nil {
				rec.MessageID, err = optString("messageId", w.messageID)
			}
		}
	case KindCancel:
		rec.ID, err = optString("id", w.id)
	case KindScroll:
		if w.up == nil || w.up[0] == 'n' {
			return rec, errors.New("missing up")
		}
		rec.Up, err = optBool("up", w.up)
	case KindFetch:
		var req int64
		if req, err = optInt("req", w.req); err != nil {
			return rec, err
		}
		if req < 1 || req > 1<<31 {
			return rec, fmt.Errorf("req %d: requests are numbered from 1", req)
		}
		rec.Req = int(req)
		if rec.FetchErr, err = optBool("error", w.err); err != nil {
			return rec, err
		}
		if w.rows != nil && w.rows[0] != 'n' {
			rec.Rows, err = decodeChunks("rows", w.rows, in, cache)
			rec.HasRows = true
			if rec.Rows == nil {
				rec.Rows = []Chunk{}
			}
			rec.rows = newRowSet(rec.Rows)
		}
	}
	return rec, err
}

func decodeMeta(b []byte) (*Meta, error) {
	m := &Meta{}
	var err error
	members(b, func(key, val []byte) {
		if err != nil {
			return
		}
		switch name := string(fieldName(key)); name {
		case "k":
		case "version":
			var v int64
			v, err = optInt("version", val)
			m.Version = int(v)
		case "tab":
			m.Tab, err = optString("tab", val)
		case "name":
			m.Name, err = optString("name", val)
		case "expect":
			m.Expect, err = optString("expect", val)
		default:
			if m.Extra == nil {
				m.Extra = map[string]string{}
			}
			m.Extra[name] = looseString(val)
		}
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// eventFields are the members of a frame the model may read.
type eventFields struct {
	typ, tabID, id, turnID, status, delta, data, stream, message, messageID,
	messageIDs, reason, modelID, toolCall, toolResult, err, statuses []byte
}

// decodeEvent decodes a frame. Only the fields its type uses are read, and
// only they must have the type replay.md gives; every other field is ignored
// whatever its shape. Raw is v itself: the caller passes bytes it owns.
func decodeEvent(v []byte, in interner) (*Event, error) {
	if v[0] != '{' {
		return nil, fmt.Errorf("want an object, not %s", kindOf(v))
	}
	var f eventFields
	members(v, func(key, val []byte) {
		switch string(fieldName(key)) {
		case "type":
			f.typ = val
		case "tabId":
			f.tabID = val
		case "id":
			f.id = val
		case "turnId":
			f.turnID = val
		case "status":
			f.status = val
		case "delta":
			f.delta = val
		case "data":
			f.data = val
		case "stream":
			f.stream = val
		case "message":
			f.message = val
		case "messageId":
			f.messageID = val
		case "messageIds":
			f.messageIDs = val
		case "reason":
			f.reason = val
		case "modelId":
			f.modelID = val
		case "toolCall":
			f.toolCall = val
		case "toolResult":
			f.toolResult = val
		case "error":
			f.err = val
		case "statuses":
			f.statuses = val
		}
	})
	typ, err := in.optString("type", f.typ)
	if err != nil {
		return nil, err
	}
	if typ == "" {
		return nil, errors.New("frame without type")
	}
	ev := &Event{Type: typ, Raw: v}
	if ev.TabID, err = in.optString("tabId", f.tabID); err != nil {
		return nil, err
	}
	switch typ {
	case "tab-created":
		ev.ID = looseString(f.id)
	case "status":
		ev.Status, err = in.optString("status", f.status)
	case "turn-start", "turn-sealed":
		ev.TurnID, err = in.optString("turnId", f.turnID)
	case "text-delta", "reasoning-delta":
		ev.Delta, err = optString("delta", f.delta)
	case "shell-output":
		ev.Data, ev.Stream = looseString(f.data), looseString(f.stream)
	case "tool-call":
		ev.ToolCall, err = decodeToolCall(f.toolCall)
	case "tool-result":
		ev.ToolResult, err = decodeToolResult(f.toolResult)
	case "error":
		if f.err != nil {
			ev.Error = json.RawMessage(f.err)
		}
	case "notice":
		ev.Message = looseString(f.message)
	case "model-changed":
		ev.ModelID = looseString(f.modelID)
	case "message-queued":
		if ev.MessageID, err = optString("messageId", f.messageID); err == nil {
			ev.Message, err = optString("message", f.message)
		}
	case "message-consumed":
		if ev.MessageIDs, err = optStrings("messageIds", f.messageIDs); err == nil {
			ev.Reason, err = optString("reason", f.reason)
		}
	case "message-cancelled":
		ev.MessageID, err = optString("messageId", f.messageID)
	case "statuses":
		ev.Statuses, err = decodeStatuses(f.statuses, in)
	}
	if err != nil {
		return nil, err
	}
	return ev, nil
}

func decodeToolCall(v []byte) (*ToolCall, error) {
	if v == nil || v[0] == 'n' {
		return nil, nil
	}
	if v[0] != '{' {
		return nil, &typeError{"toolCall", kindOf(v)}
	}
	tc := &ToolCall{}
	members(v, func(key, val []byte) {
		switch string(fieldName(key)) {
		case "id":
			tc.ID = looseString(val)
		case "name":
			tc.Name = looseString(val)
		case "arguments":
			tc.Arguments = json.RawMessage(val)
		}
	})
	return tc, nil
}

func decodeToolResult(v []byte) (*ToolResult, error) {
	if v == nil || v[0] == 'n' {
		return nil, nil
	}
	if v[0] != '{' {
		return nil, &typeError{"toolResult", kindOf(v)}
	}
	tr := &ToolResult{}
	members(v, func(key, val []byte) {
		switch string(fieldName(key)) {
		case "toolCallId":
			tr.ToolCallID = looseString(val)
		case "result":
			tr.Result = json.RawMessage(val)
		case "isError":
			tr.IsError = len(val) > 0 && val[0] == 't'
		}
	})
	return tr, nil
}

func decodeStatuses(v []byte, in interner) (map[string]StatusSnapshot, error) {
	if v == nil || v[0] == 'n' {
		return nil, nil
	}
	if v[0] != '{' {
		return nil, &typeError{"statuses", kindOf(v)}
	}
	out := map[string]StatusSnapshot{}
	var err error
	members(v, func(key, val []byte) {
		if err != nil || val[0] == 'n' {
			return
		}
		tab := string(fieldName(key))
		if val[0] != '{' {
			err = &typeError{"statuses." + tab, kindOf(val)}
			return
		}
		var s StatusSnapshot
		members(val, func(k, x []byte) {
			if err != nil {
				return
			}
			switch string(fieldName(k)) {
			case "status":
				s.Status, err = optString("status", x)
			case "currentAssistantId":
				s.CurrentAssistantID, err = optString("currentAssistantId", x)
			case "currentTurnId":
				s.CurrentTurnID, err = optString("currentTurnId", x)
			case "currentChunks":
				if x[0] != 'n' {
					s.CurrentChunks, err = decodeChunks("currentChunks", x, in, nil)
				}
			}
		})
		out[tab] = s
	})
	return out, err
}

// decodeChunks decodes an array of rows. Rows cache knows are shared; the
// others are decoded from a copy of their bytes and, with a cache, kept.
func decodeChunks(field string, v []byte, in interner, cache rowCache) ([]Chunk, error) {
	if v[0] != '[' {
		return nil, &typeError{field, kindOf(v)}
	}
	n := 0
	elements(v, func([]byte) { n++ })
	out := make([]Chunk, 0, n)
	var err error
	elements(v, func(el []byte) {
		if err != nil {
			return
		}
		if row, ok := cache.known(el); ok {
			out = append(out, row)
			return
		}
		var row Chunk
		if row, err = decodeChunk(field, bytes.Clone(el), in); err == nil {
			out = append(out, row)
			cache.keep(row)
		}
	})
	return out, err
}

// decodeChunk decodes a row. The fields the model reads (id, turnId, seq,
// role, type) must have their type; the others may have any shape.
func decodeChunk(field string, v []byte, in interner) (Chunk, error) {
	if v[0] != '{' {
		return Chunk{}, &typeError{field, "array of " + kindOf(v)}
	}
	c := Chunk{Raw: v}
	var err error
	members(v, func(key, val []byte) {
		if err != nil {
			return
		}
		switch string(fieldName(key)) {
		case "id":
			c.ID = in.looseString(val)
		case "tabId":
			c.TabID = in.looseString(val)
		case "seq":
			c.Seq, err = optInt(field+".seq", val)
		case "turnId":
			c.TurnID, err = in.optString(field+".turnId", val)
		case "step":
			n, _ := optInt("step", val)
			c.Step = int(n)
		case "role":
			c.Role, err = in.optString(field+".role", val)
		case "type":
			c.Type, err = in.optString(field+".type", val)
		case "data":
			c.Data = json.RawMessage(val)
		case "createdAt":
			c.CreatedAt, _ = optInt("createdAt", val)
		}
	})
	if err != nil {
		return Chunk{}, err
	}
	if c.Role == RoleUser || c.Type == "tool_result" {
		// What the policies and the checker read; other rows' text only
		// shows in reports.
		c.text = chunkText(c.Role, c.Data)
	}
	return c, nil
}

// chunkText is what a row shows: for a user row its data.text when that is
// a string, otherwise every string inside its data, joined by newlines.
func chunkText(role string, data []byte) string {
	if len(data) == 0 || checkValue(data) != nil {
		return string(data)
	}
	data = bytes.TrimSpace(data)
	if role == RoleUser && data[0] == '{' {
		var text []byte
		members(data, func(key, val []byte) {
			if string(fieldName(key)) == "text" && val[0] == '"' {
				text = val
			}
		})
		if text != nil {
			return stringOf(text)
		}
	}
	return string(appendStrings(make([]byte, 0, len(data)), data))
}

// shown is the text of the row.
func (c *Chunk) shown() string {
	if c.text == "" && len(c.Data) > 0 {
		return chunkText(c.Role, c.Data)
	}
	return c.text
}

// UnmarshalJSON decodes a row as the trace decoder does.
func (c *Chunk) UnmarshalJSON(b []byte) error {
	if err := checkValue(b); err != nil {
		return err
	}
	d, err := decodeChunk("row", bytes.Clone(bytes.TrimSpace(b)), nil)
	if err != nil {
		return err
	}
	*c = d
	return nil
}

// MarshalJSON writes the row as it came, or its fields when it was made in memory.
func (c Chunk) MarshalJSON() ([]byte, error) {
	if len(c.Raw) > 0 {
		return c.Raw, nil
	}
	type plain Chunk
	return json.Marshal(plain(c))
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

// rawText renders a JSON value as text: a string as itself, anything else as
// its JSON, null or nothing as "".
func rawText(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || checkValue(v) != nil {
		return string(v)
	}
	return looseString(v)
}

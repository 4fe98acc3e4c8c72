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
	"hash/maphash"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/rawjson"
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

// recordBlock is the most records DecodeTrace gathers in one block (about 300 KB).
const recordBlock = 2048

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
	// Origins, for a capture's tab, says where each record came from in
	// the capture (entry, frame, time): reports name records by it, their
	// index being one only the converted trace has. Nil for trace files.
	Origins []string
	// Err, when set, says why the file could not be read: Run gives the
	// trace the verdict Error.
	Err error
	// open, when set, opens the JSONL file Records were not decoded from:
	// Run and States decode it as they replay it (OpenTrace).
	open func() (io.ReadCloser, error)
	// first, when set, is the file opened already, its meta record read:
	// the first replay reads it (a stream that cannot be opened twice).
	first *lineSource
	rc    io.Closer
}

// ReadTrace returns the trace of a JSONL stream that can be read only
// once (standard input), to be replayed while it is decoded, as OpenTrace
// does: its meta record is read now. A second replay (the deferral check of
// a trace whose reconcile was deferred) cannot be made: it is a warning.
func ReadTrace(name string, r io.ReadCloser) *Trace {
	t := &Trace{Name: name, Source: name, rc: r}
	t.open = func() (io.ReadCloser, error) {
		return nil, fmt.Errorf("%s can be read only once", name)
	}
	src, err := openLines(r)
	if err != nil {
		t.Err = fmt.Errorf("%s: %w", name, err)
		return t
	}
	t.first = src
	t.setMeta(src.meta)
	return t
}

func (t *Trace) setMeta(m *Meta) {
	if m == nil {
		return
	}
	t.Meta = m
	if m.Name != "" {
		t.Name = m.Name
	}
	t.Tab, t.Expect = m.Tab, m.Expect
}

// OpenTrace returns the trace of a JSONL file, to be replayed while it is
// decoded: only its meta record is read now (Name, Tab, Expect, Meta).
// Records stays empty. A file that cannot be opened, or whose first lines
// do not decode, gives a trace whose Err says why.
func OpenTrace(path string, open func() (io.ReadCloser, error)) *Trace {
	t := &Trace{Name: traceName(path), Source: path, open: open}
	rc, err := open()
	if err != nil {
		t.Err = err
		return t
	}
	defer rc.Close()
	src, err := openLines(rc)
	if err != nil {
		t.Err = fmt.Errorf("%s: %w", path, err)
		return t
	}
	t.setMeta(src.meta)
	return t
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

	Req  int     // fetch
	Rows []Chunk // fetch rows when HasRows
	rows *rowSet // Rows indexed, shared by every replay of a decoded record

	Up       bool // scroll
	HasRows  bool // fetch carried rows; false with !FetchErr means "ask the backend model"
	FetchErr bool // fetch answered with an error
}

// detached returns a copy of rec with a frame of its own: a streamed
// replay decodes later records into the memory of those that left its
// window.
func (rec *Record) detached() Record {
	c := *rec
	if c.Ev != nil {
		ev := *c.Ev
		c.Ev = &ev
	}
	return c
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

// knownType maps a known frame type, quoted as a frame writes it without
// escapes, to its name.
var knownType = func() map[string]string {
	m := map[string]string{}
	for _, t := range FrameTypes() {
		m[`"`+t+`"`] = t
	}
	return m
}()

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
	return decodeTrace(r, name, lineCount(r))
}

// maxPresized bounds the records decodeTrace allocates room for up front.
const maxPresized = 1 << 20

// lineCount counts the lines of r when r can be read twice (a file, a
// bytes.Reader), without moving it; else, or when there are too many, or
// one is longer than the decoder accepts, it returns 0. Either way it reads
// no more than the decoder will.
func lineCount(r io.Reader) int {
	ra, ok := r.(io.ReaderAt)
	if !ok {
		return 0
	}
	buf := make([]byte, 64<<10)
	n, gap := 1, 0 // gap: bytes since the last newline
	for off := int64(0); n <= maxPresized && gap <= maxLine; {
		k, err := ra.ReadAt(buf, off)
		chunk := buf[:k]
		if c := bytes.Count(chunk, []byte{'\n'}); c > 0 {
			if gap+bytes.IndexByte(chunk, '\n') > maxLine {
				return 0
			}
			n += c
			gap = k - 1 - bytes.LastIndexByte(chunk, '\n')
		} else {
			gap += k
		}
		off += int64(k)
		if err != nil {
			if errors.Is(err, io.EOF) && gap <= maxLine {
				return min(n, maxPresized)
			}
			return 0
		}
	}
	return 0
}

// decodeTrace is DecodeTrace with room for lines records, 0 when their
// number is not known: then they are gathered in blocks joined at the end.
func decodeTrace(r io.Reader, name string, lines int) (*Trace, error) {
	t := &Trace{Name: name}
	d := &decoder{in: interner{}, seenAt: map[uint64]int{}}
	var blocks [][]Record // filled blocks of records
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	t.Records = make([]Record, 0, lines)
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, bom) // as some editors save UTF-8
		}
		b = trimSpace(b)
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
		if n := len(t.Records); n == cap(t.Records) {
			// Full: keep it and fill a new block; one copy joins them
			// at the end, instead of one per doubling, and the blocks
			// together hold no more than the records.
			blocks = append(blocks, t.Records)
			t.Records = make([]Record, 0, min(2*n+64, recordBlock))
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

// trimSpace trims JSON's white space from both ends of b.
func trimSpace(b []byte) []byte {
	return bytes.TrimRight(b[rawjson.SkipSpace(b, 0):], " \t\r\n")
}

// wireFields are the members of a record line, as raw values.
type wireFields struct {
	k, ev, id, text, status, messageID, up, req, rows, err []byte

	evf     eventFields // ev's members, when ev is an object
	rowList bool        // rows is an array, split into decoder.spans
}

// slot returns where a record line's member named key is kept, or nil.
func (w *wireFields) slot(key []byte) *[]byte {
	switch string(key) {
	case "k":
		return &w.k
	case "ev":
		return &w.ev
	case "id":
		return &w.id
	case "text":
		return &w.text
	case "status":
		return &w.status
	case "messageId":
		return &w.messageID
	case "up":
		return &w.up
	case "req":
		return &w.req
	case "rows":
		return &w.rows
	case "error":
		return &w.err
	}
	return nil
}

// decoder decodes the lines of one trace, sharing what they repeat.
type decoder struct {
	in     interner
	seen   []Chunk        // every distinct row of the trace's answers, in the order they first came
	seenAt map[uint64]int // a row's bytes hashed -> its index in seen
	mem    arena          // the bytes records keep: frames and rows not seen before
	evs    []Event        // frames are allocated from it, a block at a time
	spans  []rowSpan      // the rows of the line being decoded
	at     []int          // their indexes in seen
	key    []byte         // a member name with escapes, decoded
}

// forget lets the rows seen go but the last keep, which the next answer
// most likely shows again, and the strings shared so far.
func (d *decoder) forget(keep int) {
	keep = min(keep, len(d.seen))
	d.seen = append(make([]Chunk, 0, 2*keep), d.seen[len(d.seen)-keep:]...)
	d.seenAt = make(map[uint64]int, len(d.seen))
	for i := range d.seen {
		d.seenAt[maphash.Bytes(rowSeed, d.seen[i].Raw)] = i
	}
	d.in = interner{}
}

// rowSpan is a row of a chunk answer: b[s:e] of its line. A row seen
// before (known) was checked and decoded when it first came: it is
// decoder.seen[at].
type rowSpan struct {
	s, e  int
	at    int
	known bool
}

// line decodes one trace line: a record, or the meta record.
func (d *decoder) line(b []byte) (Record, *Meta, error) {
	var w wireFields
	if !scanFrame(b, &w) {
		if err := d.scan(b, &w); err != nil {
			return Record{}, nil, err
		}
	}
	if w.k == nil || w.k[0] == 'n' {
		return Record{}, nil, errors.New(`record without "k" (its kind)`)
	}
	kind, err := kindString(w.k)
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
	rec, err := d.record(b, kind, &w)
	if err != nil {
		return Record{}, nil, fmt.Errorf("%s record: %w", kind, err)
	}
	return rec, nil, nil
}

// scan checks the line b as encoding/json would and gathers the members of
// its record in the same pass: the members of a frame as they are checked,
// and the rows of a chunk answer as spans, those seen before on an earlier
// line being neither checked nor decoded again. Only JSON's white space
// surrounds b.
func (d *decoder) scan(b []byte, w *wireFields) error {
	if len(b) == 0 || b[0] != '{' {
		if err := rawjson.Check(b); err != nil {
			return fmt.Errorf("malformed JSON: %w", err)
		}
		return fmt.Errorf("a record must be a JSON object, not %s", kindOf(b))
	}
	i, err := d.object(b, 0, 0, func(key []byte, vs int) (int, error) {
		slot := w.slot(key) // before d.key is reused for ev's members
		var ve int
		var err error
		switch {
		case slot == &w.rows:
			ve, err = d.scanRows(b, vs)
			w.rowList = err == nil && b[vs] == '['
		case slot == &w.ev && vs < len(b) && b[vs] == '{':
			w.evf = eventFields{}
			ve, err = d.object(b, vs, 1, func(key []byte, vs int) (int, error) {
				ve, err := rawjson.Value(b, vs, 2)
				if f := w.evf.slot(key); f != nil && err == nil {
					*f = b[vs:ve]
				}
				return ve, err
			})
		default:
			ve, err = rawjson.Value(b, vs, 1)
		}
		if slot != nil && err == nil {
			*slot = b[vs:ve]
		}
		return ve, err
	})
	if err == nil {
		if i = rawjson.SkipSpace(b, i); i < len(b) {
			err = rawjson.Unexpected(b, i, "after top-level value")
		}
	}
	if err != nil {
		return fmt.Errorf("malformed JSON: %w", err)
	}
	return nil
}

// plainByte is 1 for the bytes a string may hold as they are: not a quote,
// a backslash, a control character or part of a multi-byte sequence.
var plainByte = func() (t [256]byte) {
	for c := 0x20; c < 0x80; c++ {
		if c != '"' && c != '\\' {
			t[c] = 1
		}
	}
	return t
}()

// stringByte is 1 for the bytes a string may hold without a second look at
// them in a valid line: plainByte's, and those of multi-byte sequences
// (encoding/json accepts invalid UTF-8, decoding it as U+FFFD).
var stringByte = func() (t [256]byte) {
	t = plainByte
	for c := 0x80; c < 0x100; c++ {
		t[c] = 1
	}
	return t
}()

// framePrefix starts a ws record line as recorders write it.
const framePrefix = `{"k":"ws","ev":{`

// scanFrame is scan for the lines most of a trace is made of: a ws record
// written as recorders write it, {"k":"ws","ev":{…}} with no white space,
// whose frame has only string members, with plain names. Such a line is
// valid JSON, and its members are gathered as scan gathers them (the last
// of a name wins). Any other line, valid or not, gives false: scan reads it.
func scanFrame(b []byte, w *wireFields) bool {
	n := len(framePrefix)
	if len(b) < n+2 || string(b[:n]) != framePrefix || b[n] != '"' {
		return false
	}
	w.k = b[5:9]
	w.evf = eventFields{}
	i := n
	for {
		// A name: plain bytes only.
		ke := i + 1
		for ke < len(b) && plainByte[b[ke]] != 0 {
			ke++
		}
		if ke+1 >= len(b) || b[ke] != '"' || b[ke+1] != ':' {
			return false
		}
		// A string: no escape, no control character.
		vs := ke + 2
		if vs >= len(b) || b[vs] != '"' {
			return false
		}
		ve := vs + 1
		for ve < len(b) && stringByte[b[ve]] != 0 {
			ve++
		}
		if ve >= len(b) || b[ve] != '"' {
			return false
		}
		ve++
		if f := w.evf.slot(b[i+1 : ke]); f != nil {
			*f = b[vs:ve]
		}
		if ve >= len(b) {
			return false
		}
		switch b[ve] {
		case ',':
			if i = ve + 1; i >= len(b) || b[i] != '"' {
				return false
			}
			continue
		case '}':
			if ve+2 != len(b) || b[ve+1] != '}' {
				return false
			}
			w.ev = b[n-1 : ve+1]
			return true
		}
		return false
	}
}

// object is validObject handing value each member's name with its escapes
// decoded.
func (d *decoder) object(b []byte, i, depth int, value func(key []byte, vs int) (int, error)) (int, error) {
	return rawjson.Object(b, i, depth, func(key []byte, plain bool, vs int) (int, error) {
		if !plain {
			d.key = rawjson.AppendUnquoted(d.key[:0], key)
			key = d.key
		}
		return value(key, vs)
	})
}

// scanRows checks the value starting at b[i], a record's rows, and when it
// is an array splits it into d.spans.
func (d *decoder) scanRows(b []byte, i int) (int, error) {
	d.spans = d.spans[:0]
	if i >= len(b) || b[i] != '[' {
		return rawjson.Value(b, i, 1)
	}
	i = rawjson.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	next := -1 // the row seen after the one before, most often this one
	for {
		sp := rowSpan{s: i}
		if next >= 0 && next < len(d.seen) && bytes.HasPrefix(b[i:], d.seen[next].Raw) {
			// A valid JSON value ends where its bytes do: these are that
			// row, whatever follows. An answer is most often a run of
			// the rows seen so far, in their order: they are found
			// without looking for their end or hashing them.
			sp.e, sp.at, sp.known = i+len(d.seen[next].Raw), next, true
		} else if len(d.seen) > 0 && i < len(b) && b[i] == '{' {
			// Bytes equal to a row checked before are that row. These
			// bytes are not validated yet: ValueEnd is bounds-checked
			// (-1 when the value does not end), End is not.
			if e := rawjson.ValueEnd(b, i); e > 0 {
				k, ok := d.seenAt[maphash.Bytes(rowSeed, b[i:e])]
				sp.e, sp.at, sp.known = e, k, ok && bytes.Equal(d.seen[k].Raw, b[i:e])
			}
		}
		next = -1
		if sp.known {
			next = sp.at + 1
		}
		if !sp.known {
			var err error
			if sp.e, err = rawjson.Value(b, i, 2); err != nil {
				return sp.e, err
			}
		}
		d.spans = append(d.spans, sp)
		i = rawjson.SkipSpace(b, sp.e)
		if i < len(b) && b[i] == ',' {
			i = rawjson.SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		return i, rawjson.Unexpected(b, i, "after array element")
	}
}

// kindString reads a record's kind, sharing the kinds replay.md names.
func kindString(v []byte) (string, error) {
	if v[0] == '"' {
		switch string(v) {
		case `"ws"`:
			return KindWS, nil
		case `"fetch"`:
			return KindFetch, nil
		case `"send"`:
			return KindSend, nil
		case `"http"`:
			return KindHTTP, nil
		case `"meta"`:
			return KindMeta, nil
		case `"scroll"`:
			return KindScroll, nil
		case `"cancel"`:
			return KindCancel, nil
		}
	}
	return optString("k", v)
}

// fieldName returns a raw object key as its name, decoding escapes and
// replacing invalid UTF-8 as encoding/json does.
func fieldName(key []byte) []byte {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return rawjson.AppendUnquoted(nil, key)
		}
	}
	return key
}

// newEvent returns a zero Event from the decoder's current block, whose
// free slots are zero (a streamed batch clears its frames before it is
// decoded into again).
func (d *decoder) newEvent() *Event {
	if len(d.evs) == cap(d.evs) {
		d.evs = make([]Event, 0, 96) // under 32 KB: a small allocation
	}
	d.evs = d.evs[:len(d.evs)+1]
	return &d.evs[len(d.evs)-1]
}

// rowsOf decodes the rows d.spans split from line b. An answer is the last
// rows of the tab, so it is most often a run of the rows the trace showed
// so far, in the order it first showed them: then it is that part of
// d.seen, not a copy.
func (d *decoder) rowsOf(b []byte) ([]Chunk, error) {
	at := d.at[:0]
	for _, sp := range d.spans {
		i := sp.at
		if !sp.known {
			el := b[sp.s:sp.e]
			hash := maphash.Bytes(rowSeed, el)
			// A row repeated within this answer is known by now.
			var ok bool
			if i, ok = d.seenAt[hash]; !ok || !bytes.Equal(d.seen[i].Raw, el) {
				row, err := decodeChunk("rows", d.mem.copy(el), d.in)
				if err != nil {
					return nil, err
				}
				i = len(d.seen)
				d.seen = append(d.seen, row)
				d.seenAt[hash] = i
			}
		}
		at = append(at, i)
	}
	d.at = at
	if n := len(at); n > 0 && at[n-1]-at[0] == n-1 && sorted(at) {
		return d.seen[at[0] : at[0]+n : at[0]+n], nil
	}
	out := make([]Chunk, len(at))
	for k, i := range at {
		out[k] = d.seen[i]
	}
	return out, nil
}

// sorted reports whether list is increasing.
func sorted(list []int) bool {
	for k := 1; k < len(list); k++ {
		if list[k] <= list[k-1] {
			return false
		}
	}
	return true
}

// arena hands out copies of the bytes a trace keeps from large blocks: one
// allocation per block rather than one per frame or row.
type arena struct{ block []byte }

const arenaBlock = 32 << 10

func (a *arena) copy(b []byte) []byte {
	if len(b) > cap(a.block)-len(a.block) {
		if len(b) > arenaBlock/8 {
			return bytes.Clone(b)
		}
		a.block = make([]byte, 0, arenaBlock)
	}
	n := len(a.block)
	a.block = append(a.block, b...)
	return a.block[n:len(a.block):len(a.block)]
}

// moved returns the part of to that x is of from, where x is a slice of from
// (taken with two indexes, so that its capacity says where it starts) and to
// a copy of from.
func moved(x, from, to []byte) []byte {
	if x == nil {
		return nil
	}
	off := cap(from) - cap(x)
	return to[off : off+len(x)]
}

// record decodes the record of kind whose members are w, from line b.
func (d *decoder) record(b []byte, kind string, w *wireFields) (Record, error) {
	rec := Record{Kind: kind}
	var err error
	switch kind {
	case KindWS:
		if w.ev == nil || w.ev[0] == 'n' {
			return rec, errors.New("missing ev")
		}
		if w.ev[0] != '{' {
			return rec, fmt.Errorf("ev: want an object, not %s", kindOf(w.ev))
		}
		// The frame keeps its bytes, and the fields that are JSON
		// values keep theirs: both move from the line to the arena.
		raw := d.mem.copy(w.ev)
		f := &w.evf
		f.toolCall, f.toolResult, f.err = moved(f.toolCall, w.ev, raw), moved(f.toolResult, w.ev, raw), moved(f.err, w.ev, raw)
		rec.Ev = d.newEvent()
		if err = f.decode(rec.Ev, raw, d.in); err != nil {
			return rec, fmt.Errorf("ev: %w", err)
		}
	case KindSend:
		if rec.ID, err = optString("id", w.id); err == nil {
			rec.Text, err = optString("text", w.text)
		}
	case KindHTTP:
		if rec.ID, err = optString("id", w.id); err == nil {
			if rec.Status, err = d.in.optString("status", w.status); err == nil {
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
			if !w.rowList {
				return rec, &typeError{"rows", kindOf(w.rows)}
			}
			if rec.Rows, err = d.rowsOf(b); err != nil {
				return rec, err
			}
			rec.HasRows = true
			rec.rows = newRowSet(rec.Rows)
		}
	}
	return rec, err
}

func decodeMeta(b []byte) (*Meta, error) {
	// The last member of a name wins, as in encoding/json.
	var version, tab, name, expect []byte
	m := &Meta{}
	members(b, func(key, val []byte) {
		switch key := string(fieldName(key)); key {
		case "k":
		case "version":
			version = val
		case "tab":
			tab = val
		case "name":
			name = val
		case "expect":
			expect = val
		default:
			if m.Extra == nil {
				m.Extra = map[string]string{}
			}
			m.Extra[key] = looseString(val)
		}
	})
	v, err := optInt("version", version)
	if err != nil {
		return nil, err
	}
	m.Version = int(v)
	if m.Tab, err = optString("tab", tab); err != nil {
		return nil, err
	}
	if m.Name, err = optString("name", name); err != nil {
		return nil, err
	}
	if m.Expect, err = optString("expect", expect); err != nil {
		return nil, err
	}
	return m, nil
}

// eventFields are the members of a frame the model may read.
type eventFields struct {
	typ, tabID, id, turnID, status, delta, data, stream, message, messageID,
	messageIDs, reason, modelID, toolCall, toolResult, err, statuses []byte
}

// slot returns where a frame's member named key is kept, or nil.
func (f *eventFields) slot(key []byte) *[]byte {
	switch string(key) {
	case "type":
		return &f.typ
	case "tabId":
		return &f.tabID
	case "id":
		return &f.id
	case "turnId":
		return &f.turnID
	case "status":
		return &f.status
	case "delta":
		return &f.delta
	case "data":
		return &f.data
	case "stream":
		return &f.stream
	case "message":
		return &f.message
	case "messageId":
		return &f.messageID
	case "messageIds":
		return &f.messageIDs
	case "reason":
		return &f.reason
	case "modelId":
		return &f.modelID
	case "toolCall":
		return &f.toolCall
	case "toolResult":
		return &f.toolResult
	case "error":
		return &f.err
	case "statuses":
		return &f.statuses
	}
	return nil
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
		if p := f.slot(fieldName(key)); p != nil {
			*p = val
		}
	})
	ev := &Event{}
	if err := f.decode(ev, v, in); err != nil {
		return nil, err
	}
	return ev, nil
}

// decode fills the zero ev from the members of frame raw.
func (f *eventFields) decode(ev *Event, raw []byte, in interner) error {
	typ, ok := knownType[string(f.typ)]
	var err error
	if !ok {
		if typ, err = in.optString("type", f.typ); err != nil {
			return err
		}
	}
	if typ == "" {
		return errors.New("frame without type")
	}
	ev.Type, ev.Raw = typ, raw
	if ev.TabID, err = in.optString("tabId", f.tabID); err != nil {
		return err
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
		return err
	}
	return nil
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
	// The last member of a name wins, as in encoding/json: gather, then decode.
	last := map[string][]byte{}
	var order []string
	members(v, func(key, val []byte) {
		tab := string(fieldName(key))
		if _, ok := last[tab]; !ok {
			order = append(order, tab)
		}
		last[tab] = val
	})
	out := map[string]StatusSnapshot{}
	for _, tab := range order {
		val := last[tab]
		if val[0] == 'n' {
			continue
		}
		if val[0] != '{' {
			return nil, &typeError{"statuses." + tab, kindOf(val)}
		}
		var status, assistant, turn, chunks []byte
		members(val, func(k, x []byte) {
			switch string(fieldName(k)) {
			case "status":
				status = x
			case "currentAssistantId":
				assistant = x
			case "currentTurnId":
				turn = x
			case "currentChunks":
				chunks = x
			}
		})
		var s StatusSnapshot
		var err error
		if s.Status, err = optString("status", status); err != nil {
			return nil, err
		}
		if s.CurrentAssistantID, err = optString("currentAssistantId", assistant); err != nil {
			return nil, err
		}
		if s.CurrentTurnID, err = optString("currentTurnId", turn); err != nil {
			return nil, err
		}
		if chunks != nil && chunks[0] != 'n' {
			if s.CurrentChunks, err = decodeChunks("currentChunks", chunks, in, nil); err != nil {
				return nil, err
			}
		}
		out[tab] = s
	}
	return out, nil
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
	// The last member of a name wins, as in encoding/json: gather, then decode.
	var id, tab, seq, turn, step, role, typ, data, created []byte
	members(v, func(key, val []byte) {
		switch string(fieldName(key)) {
		case "id":
			id = val
		case "tabId":
			tab = val
		case "seq":
			seq = val
		case "turnId":
			turn = val
		case "step":
			step = val
		case "role":
			role = val
		case "type":
			typ = val
		case "data":
			data = val
		case "createdAt":
			created = val
		}
	})
	c := Chunk{Raw: v, ID: in.looseString(id), TabID: in.looseString(tab)}
	var err error
	if c.Seq, err = optInt("seq", seq); err != nil {
		return Chunk{}, inField(field, err)
	}
	if c.TurnID, err = in.optString("turnId", turn); err != nil {
		return Chunk{}, inField(field, err)
	}
	if c.Role, err = in.optString("role", role); err != nil {
		return Chunk{}, inField(field, err)
	}
	if c.Type, err = in.optString("type", typ); err != nil {
		return Chunk{}, inField(field, err)
	}
	n, _ := optInt("step", step)
	c.Step = int(n)
	c.CreatedAt, _ = optInt("createdAt", created)
	if data != nil {
		c.Data = json.RawMessage(data)
	}
	if c.Role == RoleUser || c.Type == "tool_result" {
		// What the policies and the checker read; other rows' text only
		// shows in reports.
		c.text = chunkText(c.Role, c.Data)
	}
	return c, nil
}

// inField names the member of field whose type err reports (rows.seq),
// once there is an error: the name is not built for every row.
func inField(field string, err error) error {
	var te *typeError
	if errors.As(err, &te) {
		return &typeError{field + "." + te.field, te.got}
	}
	return err
}

// chunkText is what a row shows: for a user row its data.text when that is
// a string, otherwise every string inside its data, joined by newlines.
func chunkText(role string, data []byte) string {
	if len(data) == 0 || rawjson.Check(data) != nil {
		return string(data)
	}
	data = bytes.TrimSpace(data)
	if role == RoleUser && data[0] == '{' {
		var text []byte
		members(data, func(key, val []byte) {
			if string(fieldName(key)) == "text" {
				text = val // the last one wins, as in encoding/json
			}
		})
		if text != nil && text[0] == '"' {
			return stringOf(text)
		}
	}
	more := false
	return string(appendStrings(make([]byte, 0, len(data)), data, &more))
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
	if err := rawjson.Check(b); err != nil {
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

// JSON returns the record as its trace line, a JSON object.
func (rec Record) JSON() json.RawMessage {
	b, err := json.Marshal(rec.wire())
	if err != nil {
		return json.RawMessage(`{"k":` + strconv.Quote(rec.Kind) + `}`)
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
	if len(v) == 0 || rawjson.Check(v) != nil {
		return string(v)
	}
	return looseString(v)
}

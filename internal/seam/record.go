package seam

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// Record is one decoded physical record of a log body: an event, or (v0/v1)
// a packed row standing for several consecutive chunk events.
type Record struct {
	Event  Event
	Packed *PackedRow
	// RepeatedKey is a member name the record's envelope holds twice (the
	// last one was taken, as JSON.parse does), "" when none is: readers
	// accept it, and the record rules (CheckRecord) do not.
	RepeatedKey string
}

// FirstSeq is the seq of the record's first event.
func (r *Record) FirstSeq() int64 {
	if r.Packed != nil {
		return r.Packed.Seq0
	}
	return r.Event.Seq
}

// NextSeq is the seq after the record's last event: the event count of a log
// whose last committed record this is.
func (r *Record) NextSeq() int64 {
	if r.Packed != nil {
		return r.Packed.Seq0 + int64(len(r.Packed.Parts))
	}
	return r.Event.Seq + 1
}

// Events returns the logical events of the record.
func (r *Record) Events() []Event {
	if r.Packed != nil {
		return r.Packed.Expand()
	}
	return []Event{r.Event}
}

// Packed row kinds.
const (
	TextChunks      = "text-chunks"
	ReasoningChunks = "reasoning-chunks"
	ToolCallChunks  = "tool-call-chunks"
)

// PackedRow is a run of assistant/chunk events stored as one row.
type PackedRow struct {
	Kind  string
	Seq0  int64
	Time0 int64
	Turn  int64
	Step  int64
	Index int64
	// DT holds the time gaps between members; len(DT) == len(Parts)-1.
	DT []int64
	// Parts are the texts (text, reasoning) or argument deltas (tool calls).
	Parts []string
	// ID and Name are the tool call's; HasName tells an absent name from "".
	ID      string
	Name    string
	HasName bool
}

// Expand returns the member events of the row.
func (p *PackedRow) Expand() []Event {
	out := make([]Event, len(p.Parts))
	// The members' data share one buffer, sized for them unless their
	// text needs escapes: a row of 1,024 members is two allocations.
	n := 0
	for _, part := range p.Parts {
		n += memberOverhead + len(part) + len(p.ID) + len(p.Name)
	}
	buf := make([]byte, 0, n)
	t := p.Time0
	for k, part := range p.Parts {
		if k > 0 {
			t += p.DT[k-1]
		}
		start := len(buf)
		buf = p.appendMemberData(buf, part)
		out[k] = Event{Type: "assistant/chunk", Seq: p.Seq0 + int64(k), Time: t, Data: buf[start:len(buf):len(buf)]}
	}
	return out
}

// memberOverhead is about the bytes of a member's data besides its text,
// id and name: the keys and numbers.
const memberOverhead = 96

func (p *PackedRow) memberData(part string) json.RawMessage {
	return p.appendMemberData(make([]byte, 0, memberOverhead+len(part)), part)
}

// appendMemberData appends the data of the member whose text is part.
func (p *PackedRow) appendMemberData(b []byte, part string) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, p.Turn, 10)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, p.Step, 10)
	b = append(b, `,"chunk":{"type":`...)
	switch p.Kind {
	case TextChunks:
		b = append(b, `"text-delta"`...)
	case ReasoningChunks:
		b = append(b, `"reasoning-delta"`...)
	default:
		b = append(b, `"tool-call-delta"`...)
	}
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, p.Index, 10)
	if p.Kind == ToolCallChunks {
		b = append(b, `,"id":`...)
		b = rawjson.AppendString(b, p.ID)
		if p.HasName {
			b = append(b, `,"name":`...)
			b = rawjson.AppendString(b, p.Name)
		}
		b = append(b, `,"argumentsDelta":`...)
	} else {
		b = append(b, `,"text":`...)
	}
	b = rawjson.AppendString(b, part)
	return append(b, "}}"...)
}

// isPackedKind reports whether typ names a packed row.
func isPackedKind(typ string) bool {
	return typ == TextChunks || typ == ReasoningChunks || typ == ToolCallChunks
}

var envelopeKeys = map[string]bool{"type": true, "seq": true, "time": true, "data": true,
	"ignorable": true, "surfaceOp": true, "sourceEventSeqs": true}

// DecodeRecord decodes and validates one body record of a version-v log:
// the envelope, the surfaceOp and sourceEventSeqs rules, and packed rows
// (v0/v1 only). Vocabulary and seq contiguity are the caller's (see
// CheckVocabulary and Cursor), because they are judged differently. Errors
// are ErrCorrupt without a position.
func DecodeRecord(line []byte, v int) (Record, error) { return decodeRecord(line, v, false) }

// DecodeRecordAlias is DecodeRecord for a reader done with the record
// before line changes (verify, which reads every record once): a compact
// event's Data and SurfaceOp alias line instead of being copied.
func DecodeRecordAlias(line []byte, v int) (Record, error) { return decodeRecord(line, v, true) }

func decodeRecord(line []byte, v int, alias bool) (Record, error) {
	var r Record
	var fields fieldList
	compact, err := fields.parse(line)
	if err != nil {
		return r, brokef(ErrRecordSyntax, "unparsable record: %v", err)
	}
	typ, err := fields.string("type", true)
	if err != nil {
		return r, corruptf("record: %v", err)
	}
	if typ == "" {
		return r, corruptf("record: empty type")
	}
	if isPackedKind(typ) {
		if v >= 2 {
			return r, brokef(ErrPackedRow, "packed row %q in a v%d log", typ, v)
		}
		p, err := decodePacked(typ, &fields)
		if err != nil {
			return r, err
		}
		r.Packed = p
		return r, nil
	}
	e := &r.Event
	e.Type = typ
	r.RepeatedKey = fields.dup
	if k, ok := fields.keyNotIn(envelopeKeys); ok {
		return r, corruptf("event: unexpected key %q", k)
	}
	if e.Seq, err = fields.int("seq", true); err != nil {
		return r, corruptf("event: %v", err)
	}
	if e.Seq < 0 {
		return r, corruptf("event: negative seq %d", e.Seq)
	}
	if e.Time, err = fields.int("time", true); err != nil {
		return r, corruptf("event seq %d: %v", e.Seq, err)
	}
	data, ok := fields.get("data")
	if !ok || !rawjson.IsObject(data) {
		return r, corruptf("event seq %d: data must be an object", e.Seq)
	}
	// A compact record has compact values; others are compacted here.
	e.Data = keepValid(data, compact, alias)
	if raw, ok := fields.get("ignorable"); ok {
		switch string(raw) {
		case "true":
			e.Ignorable = true
		case "false":
		default:
			return r, corruptf("event seq %d: ignorable must be a boolean", e.Seq)
		}
	}
	if raw, ok := fields.get("surfaceOp"); ok {
		e.SurfaceOp = keepValid(raw, compact, alias)
	}
	if raw, ok := fields.get("sourceEventSeqs"); ok {
		if e.SourceEventSeqs, err = decodeSourceSeqs(raw, v); err != nil {
			return r, brokef(ErrSourceEventSeqs, "event seq %d: sourceEventSeqs: %v", e.Seq, err)
		}
	}
	if err := ValidateEvent(e, v); err != nil {
		return r, err
	}
	return r, nil
}

// keepValid returns the valid JSON value raw in compact form: raw itself
// when alias allows and it is compact, else a compacted copy.
func keepValid(raw []byte, compact, alias bool) json.RawMessage {
	compact = compact || rawjson.IsCompact(raw)
	if alias && compact {
		return raw[:len(raw):len(raw)]
	}
	return compactValid(raw, compact)
}

// ValidateEvent checks the rules of one logical event that do not depend on
// its neighbours: surfaceOp present exactly on surface events and well
// formed for version v, sourceEventSeqs below the event's seq without
// repeats, v2+ logs without assistant/chunk.
func ValidateEvent(e *Event, v int) error {
	if e.Type == "" {
		return corruptf("event seq %d: empty type", e.Seq)
	}
	if isPackedKind(e.Type) {
		// A reader would take the record for a packed row.
		return brokef(ErrPackedRow, "event seq %d: type %q is a packed row kind", e.Seq, e.Type)
	}
	if e.Seq < 0 || e.Seq > rawjson.MaxSafeInteger {
		return corruptf("event: seq %d out of range", e.Seq)
	}
	if e.Time > rawjson.MaxSafeInteger || e.Time < -rawjson.MaxSafeInteger {
		return corruptf("event seq %d: time %d is not a safe integer", e.Seq, e.Time)
	}
	if len(e.Data) > 0 && !rawjson.IsObject(e.Data) {
		return corruptf("event seq %d: data must be an object", e.Seq)
	}
	if v >= 2 && e.Type == "assistant/chunk" {
		return corruptf("event seq %d: assistant/chunk is not a v%d event", e.Seq, v)
	}
	if IsSurfaceType(v, e.Type) {
		if e.SurfaceOp == nil {
			return brokef(ErrSurfaceOp, "event seq %d: %s without surfaceOp", e.Seq, e.Type)
		}
		if err := validateSurfaceOp(e.SurfaceOp, v, e.Seq); err != nil {
			return err
		}
	} else if e.SurfaceOp != nil && KnownType(v, e.Type) {
		return brokef(ErrSurfaceOp, "event seq %d: surfaceOp on %s, which is not a surface event", e.Seq, e.Type)
	}
	for _, s := range e.SourceEventSeqs {
		if s < 0 || s >= e.Seq {
			return brokef(ErrSourceEventSeqs, "event seq %d: sourceEventSeqs cites %d, not below its own seq", e.Seq, s)
		}
	}
	if s, ok := repeated(e.SourceEventSeqs); ok {
		return brokef(ErrSourceEventSeqs, "event seq %d: sourceEventSeqs repeats %d", e.Seq, s)
	}
	return nil
}

// repeated returns a value that occurs twice in seqs. Lists are short, so
// it compares pairs before it pays for a map.
func repeated(seqs []int64) (int64, bool) {
	if len(seqs) <= 16 {
		for i, s := range seqs {
			if slices.Contains(seqs[:i], s) {
				return s, true
			}
		}
		return 0, false
	}
	seen := make(map[int64]bool, len(seqs))
	for _, s := range seqs {
		if seen[s] {
			return s, true
		}
		seen[s] = true
	}
	return 0, false
}

func validateSurfaceOp(raw json.RawMessage, v int, seq int64) error {
	if string(raw) == `"append"` {
		return nil
	}
	var fields fieldList
	if _, err := fields.parse(raw); err != nil {
		return brokef(ErrSurfaceOp, "event seq %d: surfaceOp must be \"append\" or a replace", seq)
	}
	startKey, endKey := "start", "end"
	if v >= 3 {
		startKey, endKey = "startSeq", "endSeq"
	}
	if string(fields.value("op")) != `"replace"` || fields.len() != 3 {
		return brokef(ErrSurfaceOp, "event seq %d: surfaceOp must be {op:\"replace\",%s,%s}", seq, startKey, endKey)
	}
	start, err1 := fields.int(startKey, true)
	end, err2 := fields.int(endKey, true)
	if err1 != nil || err2 != nil {
		return brokef(ErrSurfaceOp, "event seq %d: surfaceOp replace needs integer %s and %s", seq, startKey, endKey)
	}
	if start < 0 || end < start || end > seq {
		return brokef(ErrSurfaceOp, "event seq %d: surfaceOp replace range [%d,%d] is invalid", seq, start, end)
	}
	return nil
}

// decodeSourceSeqs expands a stored sourceEventSeqs list. From v2 on a
// [start,end] pair stands for the run start..end.
func decodeSourceSeqs(raw json.RawMessage, v int) ([]int64, error) {
	// Every row of a log may hold a list: the items go on the stack.
	var buf [32][]byte
	items, ok := rawjson.AppendItems(buf[:0], raw)
	if !ok {
		return nil, fmt.Errorf("not an array")
	}
	out := make([]int64, 0, len(items))
	for _, it := range items {
		if v >= 2 && it[0] == '[' {
			var two [2][]byte
			pair, _ := rawjson.AppendItems(two[:0], it)
			if len(pair) != 2 {
				return nil, fmt.Errorf("range %s is not a [start,end] pair", it)
			}
			a, err1 := rawjson.SafeInt(pair[0])
			b, err2 := rawjson.SafeInt(pair[1])
			if err1 != nil || err2 != nil || a < 0 || b < a {
				return nil, fmt.Errorf("range %s is invalid", it)
			}
			if b-a > 1<<20 {
				return nil, fmt.Errorf("range %s is too long", it)
			}
			for s := a; s <= b; s++ {
				out = append(out, s)
			}
			continue
		}
		n, err := rawjson.SafeInt(it)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// AppendSourceSeqsV2 appends the v2+ physical form of seqs: when the list is
// strictly increasing, each run of 3 or more consecutive seqs becomes a
// [start,end] pair; any other list is written as it is.
func AppendSourceSeqsV2(dst []byte, seqs []int64) []byte {
	increasing := true
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			increasing = false
			break
		}
	}
	dst = append(dst, '[')
	for i := 0; i < len(seqs); {
		if i > 0 {
			dst = append(dst, ',')
		}
		j := i
		if increasing {
			for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
				j++
			}
		}
		if j-i >= 2 {
			dst = append(dst, '[')
			dst = strconv.AppendInt(dst, seqs[i], 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, seqs[j], 10)
			dst = append(dst, ']')
			i = j + 1
			continue
		}
		dst = strconv.AppendInt(dst, seqs[i], 10)
		i++
	}
	return append(dst, ']')
}

var packedKeys = map[string]bool{"type": true, "seq0": true, "time0": true, "data": true}

// The data keys of packed rows: text and reasoning chunks, tool-call chunks.
var (
	textDataKeys = map[string]bool{"turn": true, "step": true, "index": true, "dt": true, "texts": true}
	toolDataKeys = map[string]bool{"turn": true, "step": true, "index": true, "dt": true, "id": true, "name": true, "args": true}
)

func decodePacked(kind string, fields *fieldList) (*PackedRow, error) {
	if k, ok := fields.keyNotIn(packedKeys); ok {
		return nil, brokef(ErrPackedRow, "%s row: unexpected key %q", kind, k)
	}
	seq0, err := fields.int("seq0", true)
	if err != nil || seq0 < 0 {
		return nil, brokef(ErrPackedRow, "%s row: seq0 must be a non-negative integer", kind)
	}
	time0, err := fields.int("time0", true)
	if err != nil {
		return nil, brokef(ErrPackedRow, "%s row seq0 %d: %v", kind, seq0, err)
	}
	return decodePackedData(kind, seq0, time0, fields.value("data"))
}

// DecodePacked decodes and validates the payload of a packed row stored
// apart from its envelope (the data of a v0 packed line; the data column of
// an SQLite schema-17 packed row): kind is the row type, seq0 and time0 are
// those of its first member. Errors are ErrCorrupt without a position.
func DecodePacked(kind string, seq0, time0 int64, payload []byte) (*PackedRow, error) {
	if !isPackedKind(kind) {
		return nil, brokef(ErrPackedRow, "%q is not a packed row kind", kind)
	}
	if seq0 < 0 || seq0 > rawjson.MaxSafeInteger {
		return nil, brokef(ErrPackedRow, "%s row: seq0 %d out of range", kind, seq0)
	}
	if time0 > rawjson.MaxSafeInteger || time0 < -rawjson.MaxSafeInteger {
		return nil, brokef(ErrPackedRow, "%s row seq0 %d: time0 %d is not a safe integer", kind, seq0, time0)
	}
	return decodePackedData(kind, seq0, time0, payload)
}

func decodePackedData(kind string, seq0, time0 int64, raw []byte) (*PackedRow, error) {
	p := &PackedRow{Kind: kind, Seq0: seq0, Time0: time0}
	var data fieldList
	var err error
	if _, err := data.parse(raw); err != nil {
		return nil, brokef(ErrPackedRow, "%s row seq0 %d: data must be an object", kind, p.Seq0)
	}
	bad := func(format string, args ...any) error {
		return brokef(ErrPackedRow, "%s row seq0 %d: %s", kind, p.Seq0, fmt.Sprintf(format, args...))
	}
	partsKey, allowed := "texts", textDataKeys
	if kind == ToolCallChunks {
		partsKey, allowed = "args", toolDataKeys
	}
	if k, ok := data.keyNotIn(allowed); ok {
		return nil, bad("unexpected data key %q", k)
	}
	if p.Turn, err = data.int("turn", true); err != nil {
		return nil, bad("%v", err)
	}
	if p.Step, err = data.int("step", true); err != nil {
		return nil, bad("%v", err)
	}
	if p.Index, err = data.int("index", true); err != nil {
		return nil, bad("%v", err)
	}
	if kind == ToolCallChunks {
		if p.ID, err = data.string("id", true); err != nil {
			return nil, bad("%v", err)
		}
		if _, ok := data.get("name"); ok {
			if p.Name, err = data.string("name", true); err != nil {
				return nil, bad("%v", err)
			}
			p.HasName = true
		}
	}
	parts, _ := rawjson.Items(data.value(partsKey))
	if len(parts) == 0 {
		return nil, bad("%s must be a non-empty array of strings", partsKey)
	}
	p.Parts = make([]string, len(parts))
	for i, raw := range parts {
		if raw[0] != '"' {
			return nil, bad("%s must be a non-empty array of strings", partsKey)
		}
		p.Parts[i] = stringValue(raw)
	}
	dts, ok := rawjson.Items(data.value("dt"))
	if !ok {
		return nil, bad("dt must be an array of integers")
	}
	if len(dts) != len(p.Parts)-1 {
		return nil, bad("dt has %d gaps for %d members", len(dts), len(p.Parts))
	}
	p.DT = make([]int64, len(dts))
	t := p.Time0
	for i, raw := range dts {
		if p.DT[i], err = rawjson.SafeInt(raw); err != nil {
			return nil, bad("dt: %v", err)
		}
		t += p.DT[i]
		if t > rawjson.MaxSafeInteger || t < -rawjson.MaxSafeInteger {
			return nil, bad("member time out of range")
		}
	}
	if p.Seq0+int64(len(p.Parts)) > rawjson.MaxSafeInteger {
		return nil, bad("seq out of range")
	}
	return p, nil
}

// CheckVocabulary returns ErrUnsupportedFormat for an event whose type
// version v does not know and that is not ignorable.
func CheckVocabulary(e *Event, v int) error {
	if e.Ignorable || KnownType(v, e.Type) {
		return nil
	}
	return &Error{Kind: ErrUnsupportedFormat, Pos: Pos{Offset: -1, Frame: -1, Line: -1, Seq: e.Seq},
		Err: fmt.Errorf("event type %q unknown to format v%d and not marked ignorable; written by a newer dsh or a plugin", e.Type, v)}
}

// Cursor checks seq contiguity across records.
type Cursor struct{ Next int64 }

// Advance accepts r when it starts at the cursor and moves past it.
func (c *Cursor) Advance(r *Record) error {
	if first := r.FirstSeq(); first != c.Next {
		if first < c.Next {
			return &Error{Kind: ErrCorrupt, Pos: NoPos, Err: &OverlapError{Seq: first, Want: c.Next}}
		}
		return corruptf("seq gap: expected %d, got %d", c.Next, first)
	}
	c.Next = r.NextSeq()
	return nil
}

// SeedMarker tracks the v2+ seeded-header rule over a log: a seeded header
// needs a session/end-seed event with data.inherited true, and the seq of the
// last such marker is the inherited event count.
type SeedMarker struct {
	found     bool
	inherited int64
}

var inheritedTrue = []byte(`"inherited":true`)

// Observe looks at one event in seq order.
func (m *SeedMarker) Observe(e *Event) {
	if e.Type != "session/end-seed" || !bytes.Contains(e.Data, inheritedTrue) {
		return
	}
	// Match the key exactly: a struct field would also take "Inherited".
	var fields fieldList
	if _, err := fields.parse(e.Data); err == nil && string(fields.value("inherited")) == "true" {
		m.found, m.inherited = true, e.Seq
	}
}

// Result checks the rule for header h once every event was observed and
// returns the inherited event count.
func (m *SeedMarker) Result(h *Header) (int64, error) {
	if h.Version < 2 {
		if h.SeedLength != nil {
			return *h.SeedLength, nil
		}
		return 0, nil
	}
	seeded := h.IsSeeded != nil && *h.IsSeeded
	switch {
	case seeded && !m.found:
		return 0, corruptf("seeded header without a session/end-seed {inherited:true} marker")
	case !seeded && m.found:
		return 0, corruptf("unseeded header with a session/end-seed {inherited:true} marker at seq %d", m.inherited)
	}
	return m.inherited, nil
}

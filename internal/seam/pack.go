package seam

import (
	"bytes"
	"strconv"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// Limits of one packed row as dsh writes them (store.md 6).
const (
	// MaxPackedMembers bounds the member events of a packed row.
	MaxPackedMembers = 1024
	// MaxPackedPayload bounds the JSON payload of a packed row, in bytes.
	MaxPackedPayload = 1 << 20
	// minPackedMembers is the shortest run dsh packs.
	minPackedMembers = 3
)

// AppendPayloadJSON appends the payload of p, the object a packed row
// stores as its data, in dsh's key order: turn, step, index, dt, then texts,
// or id, name (when present) and args for tool calls.
func (p *PackedRow) AppendPayloadJSON(dst []byte) []byte {
	dst = append(dst, `{"turn":`...)
	dst = strconv.AppendInt(dst, p.Turn, 10)
	dst = append(dst, `,"step":`...)
	dst = strconv.AppendInt(dst, p.Step, 10)
	dst = append(dst, `,"index":`...)
	dst = strconv.AppendInt(dst, p.Index, 10)
	dst = append(dst, `,"dt":[`...)
	for i, d := range p.DT {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, d, 10)
	}
	dst = append(dst, ']')
	if p.Kind == ToolCallChunks {
		dst = append(dst, `,"id":`...)
		dst = rawjson.AppendString(dst, p.ID)
		if p.HasName {
			dst = append(dst, `,"name":`...)
			dst = rawjson.AppendString(dst, p.Name)
		}
		dst = append(dst, `,"args":[`...)
	} else {
		dst = append(dst, `,"texts":[`...)
	}
	for i, part := range p.Parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = rawjson.AppendString(dst, part)
	}
	return append(dst, "]}"...)
}

// chunkMember is an assistant/chunk event that a packed row can hold.
type chunkMember struct {
	row  PackedRow // Kind, Turn, Step, Index, ID, Name, HasName
	part string
}

// sameRun reports whether a and b may share a packed row.
func (a *chunkMember) sameRun(b *chunkMember) bool {
	return a.row.Kind == b.row.Kind && a.row.Turn == b.row.Turn && a.row.Step == b.row.Step &&
		a.row.Index == b.row.Index && a.row.ID == b.row.ID && a.row.HasName == b.row.HasName && a.row.Name == b.row.Name
}

var (
	chunkDataKeys = map[string]bool{"turn": true, "step": true, "chunk": true}
	textChunkKeys = map[string]bool{"type": true, "index": true, "text": true}
	toolChunkKeys = map[string]bool{"type": true, "index": true, "id": true, "name": true, "argumentsDelta": true}
)

// packable returns e as a packed-row member when dsh could pack it: an
// assistant/chunk with the bare envelope {type,seq,time,data}, data exactly
// {turn,step,chunk} and a text, reasoning or tool-call delta, and whose
// expansion from a packed row gives back exactly e's bytes.
func packable(e *Event) (chunkMember, bool) {
	var m chunkMember
	if e.Type != "assistant/chunk" || e.Ignorable || e.SurfaceOp != nil || e.SourceEventSeqs != nil {
		return m, false
	}
	var data, chunk fieldList
	if _, err := data.parse(e.Data); err != nil || data.len() != 3 {
		return m, false
	}
	if _, ok := data.keyNotIn(chunkDataKeys); ok {
		return m, false
	}
	if _, err := chunk.parse(data.value("chunk")); err != nil {
		return m, false
	}
	var err1, err2, err3 error
	m.row.Turn, err1 = data.int("turn", true)
	m.row.Step, err2 = data.int("step", true)
	m.row.Index, err3 = chunk.int("index", true)
	if err1 != nil || err2 != nil || err3 != nil {
		return m, false
	}
	partKey, keys := "text", textChunkKeys
	switch string(chunk.value("type")) {
	case `"text-delta"`:
		m.row.Kind = TextChunks
	case `"reasoning-delta"`:
		m.row.Kind = ReasoningChunks
	case `"tool-call-delta"`:
		m.row.Kind, partKey, keys = ToolCallChunks, "argumentsDelta", toolChunkKeys
		id, err := chunk.string("id", true)
		if err != nil {
			return m, false
		}
		m.row.ID = id
		if _, ok := chunk.get("name"); ok {
			if m.row.Name, err = chunk.string("name", true); err != nil {
				return m, false
			}
			m.row.HasName = true
		}
	default:
		return m, false
	}
	if _, ok := chunk.keyNotIn(keys); ok {
		return m, false
	}
	part, err := chunk.string(partKey, true)
	if err != nil {
		return m, false
	}
	m.part = part
	// Key order, escapes and number forms must be the ones expansion
	// writes, or a packed row would not give back the stored event.
	if !bytes.Equal(m.row.memberData(part), e.Data) {
		return m, false
	}
	return m, true
}

// PackChunks returns the physical records of a batch of consecutive events
// as dsh's packing writer stores them: every run of at least 3 consecutive
// packable assistant/chunk events of one kind, turn, step, index (and tool
// call id and name) becomes packed rows of at most maxMembers members and
// maxPayload bytes of payload (see AppendPayloadJSON); every other event is
// a record of its own. A packed row expands to exactly the events it
// replaces. The events are not copied: the records share their data.
func PackChunks(events []Event, maxMembers, maxPayload int) []Record {
	out := make([]Record, 0, len(events))
	flush := func(run []Event, members []chunkMember) {
		if len(run) < minPackedMembers {
			for _, e := range run {
				out = append(out, Record{Event: e})
			}
			return
		}
		p := members[0].row
		p.Seq0, p.Time0 = run[0].Seq, run[0].Time
		p.DT = make([]int64, len(run)-1)
		p.Parts = make([]string, len(run))
		for i := range run {
			if i > 0 {
				p.DT[i-1] = run[i].Time - run[i-1].Time
			}
			p.Parts[i] = members[i].part
		}
		out = append(out, Record{Packed: &p})
	}
	var run []Event
	var members []chunkMember
	size := 0 // payload size of run as one row
	for i := range events {
		e := &events[i]
		m, ok := packable(e)
		if !ok {
			flush(run, members)
			run, members = nil, nil
			out = append(out, Record{Event: *e})
			continue
		}
		grow := len(rawjson.AppendString(nil, m.part))
		var gap int64
		if len(run) > 0 {
			gap = e.Time - run[len(run)-1].Time
			grow += 1 + len(strconv.AppendInt(nil, gap, 10)) // a comma between parts, the gap
			if len(run) > 1 {
				grow++ // a comma between gaps
			}
		}
		if len(run) > 0 && (!members[0].sameRun(&m) || e.Seq != run[len(run)-1].Seq+1 ||
			gap > rawjson.MaxSafeInteger || gap < -rawjson.MaxSafeInteger ||
			len(run) == maxMembers || size+grow > maxPayload) {
			flush(run, members)
			run, members = nil, nil
		}
		if len(run) == 0 {
			size = payloadBase(&m.row) + len(rawjson.AppendString(nil, m.part))
			if size > maxPayload {
				out = append(out, Record{Event: *e})
				continue
			}
		} else {
			size += grow
		}
		run = append(run, *e)
		members = append(members, m)
	}
	flush(run, members)
	return out
}

// payloadBase is the size of the payload of a row like p without members.
func payloadBase(p *PackedRow) int {
	q := *p
	q.DT, q.Parts = nil, nil
	return len(q.AppendPayloadJSON(nil))
}

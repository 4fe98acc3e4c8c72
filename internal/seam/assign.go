package seam

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// AssignSeq returns the event line with its seq set to seq, and its time set
// to now when absent, for callers that let the store number a batch. Like
// append, it edits line in place when its capacity allows and returns the
// result: the caller uses the returned slice, not line. The other members'
// text is kept as it is, so that a line near the record limit is numbered
// without a second copy; a line whose members cannot be spliced so (a name
// given twice, more members than an event has) is rebuilt instead, its
// members in sorted key order, the last of repeated names kept.
func AssignSeq(line []byte, seq, now int64) ([]byte, error) {
	spans, n, valid, _ := rawjson.ScanObject(line)
	if !valid || !rawjson.IsObject(line) || n > len(spans) {
		return rebuildSeq(line, seq, now)
	}
	open := bytes.IndexByte(line, '{') + 1
	seqAt, hasTime := -1, false
	for i, sp := range spans[:n] {
		switch stringValue(line[sp.Key0:sp.Key1]) {
		case "seq":
			if seqAt >= 0 {
				return rebuildSeq(line, seq, now)
			}
			seqAt = i
		case "time":
			if hasTime {
				return rebuildSeq(line, seq, now)
			}
			hasTime = true
		}
	}
	// Two edits: members inserted after the opening brace, and the seq's
	// value replaced where it stands (or nothing, at the end).
	var ins []byte
	if seqAt < 0 {
		ins = strconv.AppendInt(append(ins, `"seq":`...), seq, 10)
	}
	if !hasTime {
		if len(ins) > 0 {
			ins = append(ins, ',')
		}
		ins = strconv.AppendInt(append(ins, `"time":`...), now, 10)
	}
	if len(ins) > 0 && n > 0 {
		ins = append(ins, ',')
	}
	val0, val1 := len(line), len(line)
	var digits []byte
	if seqAt >= 0 {
		val0, val1 = spans[seqAt].Val0, spans[seqAt].Val1
		digits = strconv.AppendInt(nil, seq, 10)
	}
	size := len(line) + len(ins) + len(digits) - (val1 - val0)
	var out []byte
	if cap(line) >= size {
		out = line[:size]
	} else {
		out = make([]byte, size)
	}
	// The text after the seq moves first: its new place never overlaps
	// the text before the seq's old place, which moves next.
	shift := len(ins)
	copy(out[val0+shift+len(digits):], line[val1:len(line)])
	copy(out[open+shift:], line[open:val0])
	copy(out, line[:open])
	copy(out[open:], ins)
	copy(out[val0+shift:], digits)
	return out, nil
}

// rebuildSeq is AssignSeq for a line it cannot splice (or the error that
// says why it is not an object): the members are written anew, in sorted
// key order.
func rebuildSeq(line []byte, seq, now int64) ([]byte, error) {
	var f fieldList
	if _, err := f.parse(line); err != nil {
		return nil, corruptf("event is not a JSON object: %v", err)
	}
	fields := f.toMap()
	fields["seq"] = json.RawMessage(strconv.FormatInt(seq, 10))
	if _, ok := fields["time"]; !ok {
		fields["time"] = json.RawMessage(strconv.FormatInt(now, 10))
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(rawjson.AppendString(nil, k))
		b.WriteByte(':')
		b.Write(fields[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

package seam

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// AssignSeq returns the event line with its seq set to seq, and its time set
// to now when absent, for callers that let the store number a batch. Other
// members are kept as they are, in sorted key order.
func AssignSeq(line []byte, seq, now int64) ([]byte, error) {
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

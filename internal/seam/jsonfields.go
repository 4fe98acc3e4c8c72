package seam

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// smallFields is how many distinct members a fieldList holds without a
// map, as many as rawjson.ScanObject locates.
const smallFields = rawjson.Spans

// field is one member of a fieldList.
type field struct {
	key string
	val json.RawMessage
}

// fieldList holds the members of a JSON object, as json.Unmarshal into a map
// would (escaped keys decoded, the last of repeated keys kept) but aliasing
// the input instead of copying values, and without a map for objects of up to smallFields distinct keys (every
// record envelope and packed-row data): the first occurrence of a key keeps
// its place and takes the last value. Larger objects move to m.
type fieldList struct {
	kv [smallFields]field
	n  int
	m  map[string]json.RawMessage // all members, once more than smallFields
	// dup is the first member name seen twice, "" when none was.
	dup string
}

// parse validates raw once and splits it into f (which must be empty),
// also reporting whether raw is compact (no white space outside strings),
// so that its values need no compaction.
func (f *fieldList) parse(raw []byte) (bool, error) {
	if !rawjson.IsObject(raw) {
		return false, errors.New("not an object")
	}
	// One pass validates raw and finds its members.
	spans, n, valid, compact := rawjson.ScanObject(raw)
	if !valid {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return false, err // for json's own message
		}
		return false, errors.New("invalid JSON") // unreachable: rawjson.Scan accepts what json does
	}
	if n <= len(spans) {
		for _, sp := range spans[:n] {
			f.set(stringValue(raw[sp.Key0:sp.Key1]), raw[sp.Val0:sp.Val1:sp.Val1])
		}
		return compact, nil
	}
	// More members than the scan kept: walk them.
	rawjson.Members(raw, func(key, val []byte) bool {
		f.set(stringValue(key), val)
		return true
	})
	return compact, nil
}

func (f *fieldList) set(key string, val json.RawMessage) {
	if f.m != nil {
		if _, ok := f.m[key]; ok && f.dup == "" {
			f.dup = key
		}
		f.m[key] = val
		return
	}
	for i := range f.n {
		if f.kv[i].key == key {
			f.kv[i].val = val
			if f.dup == "" {
				f.dup = key
			}
			return
		}
	}
	if f.n < smallFields {
		f.kv[f.n] = field{key, val}
		f.n++
		return
	}
	f.m = make(map[string]json.RawMessage, 2*smallFields)
	for _, kv := range f.kv[:f.n] {
		f.m[kv.key] = kv.val
	}
	f.m[key] = val
}

// get returns the value of key and whether it is present.
func (f *fieldList) get(key string) (json.RawMessage, bool) {
	if f.m != nil {
		v, ok := f.m[key]
		return v, ok
	}
	for _, kv := range f.kv[:f.n] {
		if kv.key == key {
			return kv.val, true
		}
	}
	return nil, false
}

// value is get without the presence flag.
func (f *fieldList) value(key string) json.RawMessage {
	v, _ := f.get(key)
	return v
}

// keys returns the distinct keys of f.
func (f *fieldList) keys() []string {
	if f.m != nil {
		keys := make([]string, 0, len(f.m))
		for k := range f.m {
			keys = append(keys, k)
		}
		return keys
	}
	keys := make([]string, f.n)
	for i, kv := range f.kv[:f.n] {
		keys[i] = kv.key
	}
	return keys
}

// len returns the number of distinct keys.
func (f *fieldList) len() int {
	if f.m != nil {
		return len(f.m)
	}
	return f.n
}

// keyNotIn returns a key of f that is not in allowed, if there is one.
func (f *fieldList) keyNotIn(allowed map[string]bool) (string, bool) {
	if f.m != nil {
		for k := range f.m {
			if !allowed[k] {
				return k, true
			}
		}
		return "", false
	}
	for _, kv := range f.kv[:f.n] {
		if !allowed[kv.key] {
			return kv.key, true
		}
	}
	return "", false
}

func (f *fieldList) toMap() map[string]json.RawMessage {
	if f.m != nil {
		return f.m
	}
	m := make(map[string]json.RawMessage, f.n)
	for _, kv := range f.kv[:f.n] {
		m[kv.key] = kv.val
	}
	return m
}

// interned holds the strings decoding meets in nearly every record — the
// member names of headers, envelopes, packed rows and messages and every
// event type of every version — so that decoding them allocates nothing.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, k := range strings.Fields(`type seq time data ignorable surfaceOp sourceEventSeqs
		seq0 time0 turn step index dt texts args id name op start end startSeq endSeq
		session role content source kind callId plugin text`) {
		m[k] = k
	}
	for _, keys := range [][]string{headerKeysV0, headerKeysV2, retiredHeaderKeys} {
		for _, k := range keys {
			m[k] = k
		}
	}
	for _, k := range []string{TextChunks, ReasoningChunks, ToolCallChunks} {
		m[k] = k
	}
	for _, v := range vocab {
		for k := range v {
			m[k] = k
		}
	}
	return m
}()

// maxInterned is the length of the longest interned string.
var maxInterned = func() int {
	n := 0
	for k := range interned {
		n = max(n, len(k))
	}
	return n
}()

// stringValue decodes a valid JSON string, as json.Unmarshal does.
func stringValue(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if len(body) <= maxInterned {
		if s, ok := interned[string(body)]; ok {
			return s // interned strings need no unescaping
		}
	}
	return rawjson.Unquote(raw)
}

func (f *fieldList) int(key string, required bool) (int64, error) {
	raw, ok := f.get(key)
	return intValue(raw, ok, key, required)
}

func intValue(raw json.RawMessage, ok bool, key string, required bool) (int64, error) {
	if !ok {
		if required {
			return 0, fmt.Errorf("missing %s", key)
		}
		return 0, nil
	}
	n, err := rawjson.SafeInt(raw)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", key, err)
	}
	return n, nil
}

func (f *fieldList) string(key string, required bool) (string, error) {
	raw, ok := f.get(key)
	return stringFieldValue(raw, ok, key, required)
}

func stringFieldValue(raw json.RawMessage, ok bool, key string, required bool) (string, error) {
	if !ok {
		if required {
			return "", fmt.Errorf("missing %s", key)
		}
		return "", nil
	}
	if len(raw) == 0 || raw[0] != '"' {
		return "", fmt.Errorf("%s must be a string", key)
	}
	return stringValue(raw), nil
}

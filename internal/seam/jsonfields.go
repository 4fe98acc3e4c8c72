package seam

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: dsh is a Node
// program, so every integer in a log must survive a float64.
const maxSafeInteger = 1<<53 - 1

// smallFields is how many distinct members a fieldList holds without a map.
const smallFields = 8

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
	if !isObject(raw) {
		return false, errors.New("not an object")
	}
	// One pass validates raw and finds its members.
	s := jsonScanner{raw: raw, compact: true, split: true, v0: -1}
	if !s.value() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return false, err // for json's own message
		}
		return false, errors.New("invalid JSON") // unreachable: scanJSON accepts what json does
	}
	if s.n <= len(s.spans) {
		for _, sp := range s.spans[:s.n] {
			f.set(stringValue(raw[sp.k0:sp.k1]), raw[sp.v0:sp.v1:sp.v1])
		}
		return s.compact, nil
	}
	// More members than the scan kept: walk them.
	i := skipSpace(raw, 0) + 1 // past '{'
	for {
		i = skipSpace(raw, i)
		if raw[i] == '}' {
			return s.compact, nil
		}
		end := stringEnd(raw, i)
		key := stringValue(raw[i:end])
		i = skipSpace(raw, skipSpace(raw, end)+1) // past ':'
		vend := valueEnd(raw, i)
		f.set(key, raw[i:vend:vend])
		if i = skipSpace(raw, vend); raw[i] == ',' {
			i++
		}
	}
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

// arrayItems returns the items of a JSON array, aliasing raw, which must be
// valid JSON; ok is false when raw is not an array.
func arrayItems(raw []byte) (items [][]byte, ok bool) {
	return appendItems(make([][]byte, 0, 8), raw)
}

// appendItems is arrayItems appending to items, which a hot caller keeps
// on its stack.
func appendItems(items [][]byte, raw []byte) ([][]byte, bool) {
	i := skipSpace(raw, 0)
	if i == len(raw) || raw[i] != '[' {
		return nil, false
	}
	for i++; ; {
		i = skipSpace(raw, i)
		if raw[i] == ']' {
			return items, true
		}
		end := valueEnd(raw, i)
		items = append(items, raw[i:end:end])
		if i = skipSpace(raw, end); raw[i] == ',' {
			i++
		}
	}
}

// The scanners below walk JSON already known to be valid.

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at raw[i].
func stringEnd(raw []byte, i int) int {
	for i++; ; i++ {
		// Skip eight bytes at a time to the next quote or backslash.
		for i+8 <= len(raw) {
			w := binary.LittleEndian.Uint64(raw[i:])
			q, b := w^(lsb*'"'), w^(lsb*'\\')
			if m := ((q-lsb)&^q | (b-lsb)&^b) & msb; m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		switch raw[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
	}
}

// valueEnd returns the index after the value starting at raw[i] of JSON
// already validated, so without the bounds checks of scanValue, which
// reads unvalidated bytes.
func valueEnd(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return stringEnd(raw, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch raw[i] {
			case '"':
				i = stringEnd(raw, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(raw) && !strings.ContainsRune(",}] \t\r\n", rune(raw[i])) {
		i++
	}
	return i
}

// stringValue decodes a valid JSON string, as json.Unmarshal does.
func stringValue(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if len(body) <= maxInterned {
		if s, ok := interned[string(body)]; ok {
			return s // interned strings need no unescaping
		}
	}
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body)
	}
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// Member returns the value of the member key of the JSON object raw as
// JSON.parse reads it: keys compared exactly once unescaped, the last of
// repeated keys winning. ok is false when raw is not a valid JSON object
// or has no such member.
func Member(raw []byte, key string) (json.RawMessage, bool) {
	var f fieldList
	if _, err := f.parse(raw); err != nil {
		return nil, false
	}
	return f.get(key)
}

// isObject reports whether raw starts, after white space, with '{'.
func isObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

// parseSafeInt parses a JSON number that must be a safe integer (JSON.parse
// accepts 3.0 and 1e3 as integers, so this does too).
func parseSafeInt(raw json.RawMessage) (int64, error) {
	if n, ok := smallInt(raw); ok {
		return n, nil
	}
	s := string(raw)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > maxSafeInteger || n < -maxSafeInteger {
			return 0, fmt.Errorf("%s is not a safe integer", s)
		}
		return n, nil
	}
	if len(s) == 0 || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
		return 0, fmt.Errorf("%.40s is not a number", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Trunc(f) != f || math.Abs(f) > maxSafeInteger {
		return 0, fmt.Errorf("%.40s is not a safe integer", s)
	}
	return int64(f), nil
}

// smallInt parses raw when it is an optional '-' and 1 to 15 digits,
// which strconv.ParseInt accepts as a safe integer, without allocating.
func smallInt(raw []byte) (int64, bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(raw) {
		n = -n
	}
	return n, true
}

// isNegZero reports whether a JSON number is a negative zero.
func isNegZero(raw json.RawMessage) bool {
	f, err := strconv.ParseFloat(string(raw), 64)
	return err == nil && f == 0 && math.Signbit(f)
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
	n, err := parseSafeInt(raw)
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

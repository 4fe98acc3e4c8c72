package seam

import (
	"bytes"
	"encoding/json"
)

// The helpers below read JSON that is already known to be valid, such as
// the Data of a decoded Event, without validating it again: a check that
// looks at a few members of every payload then costs a skim of the bytes,
// not a second parse. On invalid JSON their results are unspecified (but
// they never panic on a value that a Record holds).

// Lookup returns the value of member key of the valid JSON object raw, as
// JSON.parse reads it: keys compared exactly once unescaped, the last of
// repeated keys winning. ok is false when raw is not an object or has no
// such member.
func Lookup(raw []byte, key string) (json.RawMessage, bool) {
	var v [1]json.RawMessage
	LookupAll(raw, []string{key}, v[:])
	return v[0], v[0] != nil
}

// LookupAll sets vals[i] to the value of member keys[i] of the valid JSON
// object raw, or nil when it has none, in one pass over raw (Lookup's
// rules). It reports whether raw is an object.
func LookupAll(raw []byte, keys []string, vals []json.RawMessage) bool {
	clear(vals)
	i := skipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return false
	}
	for i++; ; {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return true
		}
		end := stringEnd(raw, i)
		k := raw[i+1 : end-1]
		i = skipSpace(raw, skipSpace(raw, end)+1) // past ':'
		vend := valueEnd(raw, i)
		for j, key := range keys {
			if string(k) == key || bytes.IndexByte(k, '\\') >= 0 && unquote(k) == key {
				vals[j] = raw[i:vend:vend]
			}
		}
		if i = skipSpace(raw, vend); i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// unquote decodes the body of a JSON string key that holds escapes.
func unquote(body []byte) string {
	q := make([]byte, 0, len(body)+2)
	q = append(append(append(q, '"'), body...), '"')
	return stringValue(q)
}

// IntValue returns the valid JSON value v as a safe integer (JSON.parse
// accepts 3.0 as 3).
func IntValue(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	n, err := parseSafeInt(v)
	return n, err == nil
}

// StringValue returns the valid JSON value v, decoded, when it is a string.
func StringValue(v []byte) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	return stringValue(v), true
}

// LookupInt returns member key of the valid JSON object raw when it is a
// safe integer.
func LookupInt(raw []byte, key string) (int64, bool) {
	v, _ := Lookup(raw, key)
	return IntValue(v)
}

// LookupString returns member key of the valid JSON object raw when it is
// a string, decoded.
func LookupString(raw []byte, key string) (string, bool) {
	v, _ := Lookup(raw, key)
	return StringValue(v)
}

// Elements calls fn with each item of the valid JSON array raw, in order,
// until fn returns false; it reports whether raw is an array.
func Elements(raw []byte, fn func(item []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i == len(raw) || raw[i] != '[' {
		return false
	}
	for i++; ; {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] == ']' {
			return true
		}
		end := valueEnd(raw, i)
		if !fn(raw[i:end:end]) {
			return true
		}
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

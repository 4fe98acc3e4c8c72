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
	i := skipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return nil, false
	}
	var val json.RawMessage
	found := false
	for i++; ; {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return val, found
		}
		end := stringEnd(raw, i)
		k := raw[i+1 : end-1]
		match := string(k) == key
		if !match && bytes.IndexByte(k, '\\') >= 0 {
			match = stringValue(raw[i:end]) == key
		}
		i = skipSpace(raw, skipSpace(raw, end)+1) // past ':'
		vend := valueEnd(raw, i)
		if match {
			val, found = raw[i:vend:vend], true
		}
		if i = skipSpace(raw, vend); i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// LookupInt returns member key of the valid JSON object raw when it is a
// safe integer (JSON.parse accepts 3.0 as 3).
func LookupInt(raw []byte, key string) (int64, bool) {
	v, ok := Lookup(raw, key)
	if !ok {
		return 0, false
	}
	n, err := parseSafeInt(v)
	return n, err == nil
}

// LookupString returns member key of the valid JSON object raw when it is
// a string, decoded.
func LookupString(raw []byte, key string) (string, bool) {
	v, ok := Lookup(raw, key)
	if !ok || len(v) == 0 || v[0] != '"' {
		return "", false
	}
	return stringValue(v), true
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

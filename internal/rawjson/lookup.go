package rawjson

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The helpers below read JSON that is already known to be valid, such as
// the Data of a decoded Event, without validating it again: a check that
// looks at a few members of every payload then costs a skim of the bytes,
// not a second parse: strings are skipped with bytes.IndexByte, at memory
// speed. On invalid JSON their results are unspecified, but they never
// panic.

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
	i := SkipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return false
	}
	for i++; ; {
		i = SkipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return true
		}
		end := scanString(raw, i)
		if end < 0 {
			return true
		}
		k := raw[i+1 : end-1]
		if i = SkipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return true
		}
		i = SkipSpace(raw, i+1)
		vend := scanValue(raw, i)
		if vend < 0 {
			return true
		}
		// A key with escapes, or with bytes that are not UTF-8 (which a
		// decoder reads as U+FFFD), is compared decoded.
		decode := bytes.IndexByte(k, '\\') >= 0 || !utf8.Valid(k)
		for j, key := range keys {
			if !decode && string(k) == key || decode && unquote(k) == key {
				vals[j] = raw[i:vend:vend]
			}
		}
		if i = SkipSpace(raw, vend); i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// unquote decodes the body of a JSON string key that holds escapes.
func unquote(body []byte) string {
	return string(AppendUnquoted(make([]byte, 0, len(body)), body))
}

// IntValue returns the valid JSON value v as a safe integer (JSON.parse
// accepts 3.0 as 3).
func IntValue(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	n, err := SafeInt(v)
	return n, err == nil
}

// StringValue returns the valid JSON value v, decoded, when it is a string.
func StringValue(v []byte) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	return Unquote(v), true
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
	i := SkipSpace(raw, 0)
	if i == len(raw) || raw[i] != '[' {
		return false
	}
	for i++; ; {
		i = SkipSpace(raw, i)
		if i >= len(raw) || raw[i] == ']' {
			return true
		}
		end := scanValue(raw, i)
		if end < 0 {
			return true
		}
		if !fn(raw[i:end:end]) {
			return true
		}
		if i = SkipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// scanString returns the index after the string that starts at raw[i], or
// -1 when it does not end. It looks for quotes with bytes.IndexByte (vector
// instructions) and takes the first one after an even run of backslashes:
// a long text is skipped at memory speed.
func scanString(raw []byte, i int) int {
	for i++; ; {
		j := bytes.IndexByte(raw[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		k := i
		for k > 0 && raw[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// scanValue returns the index after the value that starts at raw[i], or -1
// when it does not end.
func scanValue(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		return scanString(raw, i)
	case '{', '[':
		depth := 0
		for ; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				if i = scanString(raw, i); i < 0 {
					return -1
				}
				i--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case ',', '}', ']', ':':
		return -1
	}
	for i < len(raw) {
		switch raw[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// ValueEnd returns the index after the JSON value that starts at raw[i],
// under Lookup's terms (strings skipped with bytes.IndexByte, nothing
// validated), or -1 when it does not end.
func ValueEnd(raw []byte, i int) int { return scanValue(raw, i) }

// Member returns the value of the member key of the JSON object raw as
// JSON.parse reads it: keys compared exactly once unescaped, the last of
// repeated keys winning. ok is false when raw is not a valid JSON object
// or has no such member. Unlike Lookup, it validates raw.
func Member(raw []byte, key string) (json.RawMessage, bool) {
	if !IsObject(raw) || !Valid(raw) {
		return nil, false
	}
	return Lookup(raw, key)
}

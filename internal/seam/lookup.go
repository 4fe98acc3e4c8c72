package seam

import (
	"bytes"
	"encoding/json"
)

// Lookup returns the value at path (member names) in the JSON object raw,
// as JSON.parse and property access read it: keys compared exactly once
// unescaped, the last of repeated keys winning. It is for payloads a
// reader validated already (Event.Data): it walks raw once without
// validating it again, skipping the values on its way eight bytes at a
// time, and allocates nothing. Malformed input never panics: it gives ok
// false or some value of it.
func Lookup(raw []byte, path ...string) (json.RawMessage, bool) {
	v := raw
	for _, key := range path {
		var ok bool
		if v, ok = lookupMember(v, key); !ok {
			return nil, false
		}
	}
	return v, true
}

// lookupMember returns the value of the last member key of the object raw.
func lookupMember(raw []byte, key string) (json.RawMessage, bool) {
	var v [1]json.RawMessage
	if !Fields(raw, []string{key}, v[:]) || v[0] == nil {
		return nil, false
	}
	return v[0], true
}

// Fields sets vals[i] to the value of member keys[i] of the object raw (nil
// when absent), under Lookup's terms, in one walk of raw: for reading
// several members of a large payload. It reports whether raw is an object.
func Fields(raw []byte, keys []string, vals []json.RawMessage) bool {
	clear(vals)
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '"'; {
		kStart, kEnd := i, scanString(raw, i)
		if kEnd < 0 {
			return true
		}
		k := raw[kStart+1 : kEnd-1]
		i = skipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return true
		}
		vStart := skipSpace(raw, i+1)
		vEnd := scanValue(raw, vStart)
		if vEnd < 0 {
			return true
		}
		if bytes.IndexByte(k, '\\') >= 0 {
			k = []byte(stringValue(raw[kStart:kEnd]))
		}
		for n, key := range keys {
			if string(k) == key {
				vals[n] = raw[vStart:vEnd:vEnd]
			}
		}
		if i = skipSpace(raw, vEnd); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return true
}

// Items calls fn with each item of the JSON array raw, in order, until fn
// returns false, under Lookup's terms. It reports whether raw is an array.
func Items(raw []byte, fn func(item json.RawMessage) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; {
		end := scanValue(raw, i)
		if end < 0 {
			return true
		}
		if !fn(raw[i:end:end]) {
			return true
		}
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return true
}

// LookupString returns the string at path, decoded as JSON.parse does;
// ok is false when it is absent or not a string.
func LookupString(raw []byte, path ...string) (string, bool) {
	v, ok := Lookup(raw, path...)
	if !ok || len(v) < 2 || v[0] != '"' || scanString(v, 0) != len(v) {
		return "", false
	}
	return stringValue(v), true
}

// LookupStringIs reports whether the value at path is the string s, which
// must be valid UTF-8 without U+FFFD (what decoding makes of bad bytes),
// without decoding it when it holds no escape.
func LookupStringIs(raw []byte, s string, path ...string) bool {
	v, ok := Lookup(raw, path...)
	if !ok || len(v) < 2 || v[0] != '"' || scanString(v, 0) != len(v) {
		return false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1:len(v)-1]) == s
	}
	return stringValue(v) == s
}

// LookupInt returns the integer at path as encoding/json decodes it into
// an int64: absent or null is 0, a number without fraction or exponent in
// range is its value; anything else is not ok.
func LookupInt(raw []byte, path ...string) (int64, bool) {
	v, ok := Lookup(raw, path...)
	if !ok || string(v) == "null" {
		return 0, true
	}
	if n, ok := smallInt(v); ok {
		return n, true
	}
	var n int64
	if json.Unmarshal(v, &n) != nil {
		return 0, false
	}
	return n, true
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
// under Lookup's terms (strings skipped eight bytes at a time, nothing
// validated), or -1 when it does not end.
func ValueEnd(raw []byte, i int) int { return scanValue(raw, i) }

// ValidJSON reports whether raw is exactly one valid JSON value, accepting
// exactly what json.Valid accepts, in the readers' one-pass scanner.
func ValidJSON(raw []byte) bool {
	valid, _ := scanJSON(raw)
	return valid
}

package reconcile

import (
	"fmt"
	"strconv"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// The typed readers of trace fields below work on values rawjson has
// checked (a trace line is checked in the pass that gathers its members:
// see decoder.scan).

// typeError is a well-formed value of the wrong JSON type for field.
type typeError struct {
	field string
	got   string // "number", "object", …
}

func (e *typeError) Error() string { return fmt.Sprintf("field %s: unexpected %s", e.field, e.got) }

// kindOf names the JSON type of the value starting at b[0].
func kindOf(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// members calls fn for each member of the valid object v, in order, with
// its raw key (without quotes, escapes kept).
func members(v []byte, fn func(key, val []byte)) {
	rawjson.Members(v, func(key, val []byte) bool {
		fn(key[1:len(key)-1], val)
		return true
	})
}

// elements calls fn for each element of the valid array v.
func elements(v []byte, fn func(el []byte)) {
	rawjson.Elements(v, func(el []byte) bool {
		fn(el)
		return true
	})
}

// stringOf decodes the valid JSON string v as encoding/json does: escapes
// resolved, invalid UTF-8 and lone surrogates replaced by U+FFFD.
func stringOf(v []byte) string { return rawjson.Unquote(v) }

// interner shares the strings a trace repeats — row ids, turn ids, roles,
// types — so that a row read back in many chunk answers is allocated once.
// A nil interner shares nothing.
type interner map[string]string

// str decodes the JSON string v, shared.
func (in interner) str(v []byte) string {
	body := v[1 : rawjson.StringEnd(v, 0)-1]
	if in == nil || !rawjson.Plain(body) {
		return stringOf(v)
	}
	if s, ok := in[string(body)]; ok {
		return s
	}
	s := string(body)
	in[s] = s
	return s
}

func (in interner) optString(field string, v []byte) (string, error) {
	if v != nil && v[0] == '"' {
		return in.str(v), nil
	}
	return optString(field, v)
}

func (in interner) looseString(v []byte) string {
	if v != nil && v[0] == '"' {
		return in.str(v)
	}
	return looseString(v)
}

// optString reads a string field: absent or null is "", another type is an error.
func optString(field string, v []byte) (string, error) {
	switch {
	case v == nil || v[0] == 'n':
		return "", nil
	case v[0] == '"':
		return stringOf(v), nil
	}
	return "", &typeError{field, kindOf(v)}
}

// looseString reads a field the model only shows: a string as itself, null
// as "", anything else as its JSON text.
func looseString(v []byte) string {
	switch {
	case v == nil || v[0] == 'n':
		return ""
	case v[0] == '"':
		return stringOf(v)
	}
	return string(v)
}

// optInt reads an integer field: absent or null is 0.
func optInt(field string, v []byte) (int64, error) {
	if v == nil || v[0] == 'n' {
		return 0, nil
	}
	if kindOf(v) != "number" {
		return 0, &typeError{field, kindOf(v)}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, &typeError{field, "number " + string(v)}
	}
	return n, nil
}

// optBool reads a boolean field: absent or null is false.
func optBool(field string, v []byte) (bool, error) {
	switch {
	case v == nil || v[0] == 'n':
		return false, nil
	case v[0] == 't':
		return true, nil
	case v[0] == 'f':
		return false, nil
	}
	return false, &typeError{field, kindOf(v)}
}

// optStrings reads an array of strings.
func optStrings(field string, v []byte) ([]string, error) {
	if v == nil || v[0] == 'n' {
		return nil, nil
	}
	if v[0] != '[' {
		return nil, &typeError{field, kindOf(v)}
	}
	var out []string
	var err error
	elements(v, func(el []byte) {
		if err != nil {
			return
		}
		if el[0] != '"' {
			err = &typeError{field, "array of " + kindOf(el)}
			return
		}
		out = append(out, stringOf(el))
	})
	return out, err
}

// appendStrings appends every string inside v (values, not keys), in
// document order, separated by '\n': the text a chunk shows. more says
// whether a string came before, so that empty strings are separated too.
func appendStrings(dst []byte, v []byte, more *bool) []byte {
	switch kindOf(v) {
	case "string":
		if *more {
			dst = append(dst, '\n')
		}
		*more = true
		return append(dst, stringOf(v)...)
	case "object":
		members(v, func(_, val []byte) { dst = appendStrings(dst, val, more) })
	case "array":
		elements(v, func(el []byte) { dst = appendStrings(dst, el, more) })
	}
	return dst
}

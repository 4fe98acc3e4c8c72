package reconcile

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/jsonstr"
)

// This file is a one-pass JSON reader for trace lines: it validates a value
// as encoding/json would and hands out the members of objects as byte spans,
// so a record is decoded without reflection and without decoding the fields
// its kind does not use.

// maxDepth bounds the nesting of a value, as encoding/json does.
const maxDepth = 10000

var errDepth = errors.New("exceeded max depth")

// syntaxError is malformed JSON at byte offset off.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s (offset %d)", e.msg, e.off) }

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

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// validValue checks the value starting at b[i], at nesting depth, and
// returns the offset just past it.
func validValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, &syntaxError{"unexpected end of JSON input", i}
	}
	switch c := b[i]; {
	case c == '{':
		return validObject(b, i, depth, func(_ []byte, _ bool, vs int) (int, error) {
			return validValue(b, vs, depth+1)
		})
	case c == '[':
		if depth >= maxDepth {
			return i, errDepth
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = validValue(b, i, depth+1); err != nil {
				return i, err
			}
			i = skipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == ']' {
				return i + 1, nil
			}
			return i, unexpected(b, i, "after array element")
		}
	case c == '"':
		end, _, err := scanString(b, i)
		return end, err
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	}
	return i, unexpected(b, i, "looking for beginning of value")
}

// validObject checks the object starting at b[i] (a '{'), at nesting
// depth, calling value for each member with its raw key (without quotes),
// whether the key can be used as it is (no escape, valid UTF-8) and the
// offset of its value; value checks the value and returns the offset past
// it. validObject returns the offset past the object.
func validObject(b []byte, i, depth int, value func(key []byte, plain bool, vs int) (int, error)) (int, error) {
	if depth >= maxDepth {
		return i, errDepth
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, unexpected(b, i, "looking for beginning of object key string")
		}
		end, plain, err := scanString(b, i)
		if err != nil {
			return end, err
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return i, unexpected(b, i, "after object key")
		}
		if i, err = value(key, plain, skipSpace(b, i+1)); err != nil {
			return i, err
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		return i, unexpected(b, i, "after object key:value pair")
	}
}

func unexpected(b []byte, i int, context string) error {
	if i >= len(b) {
		return &syntaxError{"unexpected end of JSON input", i}
	}
	return &syntaxError{fmt.Sprintf("invalid character %s %s", strconv.QuoteRune(rune(b[i])), context), i}
}

func literal(b []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) || b[i+k] != lit[k] {
			return i + k, unexpected(b, i+k, "in literal "+lit)
		}
	}
	return i + len(lit), nil
}

func scanNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, unexpected(b, i, "in numeric literal")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, unexpected(b, i, "after decimal point in numeric literal")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, unexpected(b, i, "in exponent of numeric literal")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i, nil
}

// scanString checks the string starting at b[i] (a quote) and returns the
// offset past its closing quote, and whether its contents can be used as they
// are (no escape, valid UTF-8).
func scanString(b []byte, i int) (end int, plain bool, err error) {
	plain = true
	ascii := true
	for j := i + 1; j < len(b); j++ {
		// Most bytes need no second look: skip them eight at a time.
		for j+8 <= len(b) && plainByte[b[j]]&plainByte[b[j+1]]&plainByte[b[j+2]]&plainByte[b[j+3]]&
			plainByte[b[j+4]]&plainByte[b[j+5]]&plainByte[b[j+6]]&plainByte[b[j+7]] != 0 {
			j += 8
		}
		for j < len(b) && plainByte[b[j]] != 0 {
			j++
		}
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			if !ascii && plain {
				plain = utf8.Valid(b[i+1 : j])
			}
			return j + 1, plain, nil
		case c == '\\':
			plain = false
			j++
			if j >= len(b) {
				return j, false, &syntaxError{"unexpected end of JSON input", j}
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if j+k >= len(b) || !isHex(b[j+k]) {
						return j + k, false, unexpected(b, j+k, "in \\u hexadecimal character escape")
					}
				}
				j += 4
			default:
				return j, false, unexpected(b, j, "in string escape code")
			}
		case c < 0x20:
			return j, false, unexpected(b, j, "in string literal")
		case c >= 0x80:
			ascii = false
		}
	}
	return len(b), false, &syntaxError{"unexpected end of JSON input", len(b)}
}

// plainByte is 1 for the bytes a string may hold as they are: not a quote,
// a backslash, a control character or part of a multi-byte sequence.
var plainByte = func() (t [256]byte) {
	for c := 0x20; c < 0x80; c++ {
		if c != '"' && c != '\\' {
			t[c] = 1
		}
	}
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// checkValue validates b as exactly one JSON value (spaces around allowed).
func checkValue(b []byte) error {
	i, err := validValue(b, skipSpace(b, 0), 0)
	if err != nil {
		return err
	}
	if i = skipSpace(b, i); i < len(b) {
		return unexpected(b, i, "after top-level value")
	}
	return nil
}

// The readers below work on values checkValue has accepted.

// members calls fn for each member of the object v, in order; v must be a
// valid object. fn's key is the raw key (without quotes, escapes kept).
func members(v []byte, fn func(key, val []byte)) {
	i := skipSpace(v, 1)
	if i < len(v) && v[i] == '}' {
		return
	}
	for i < len(v) {
		kend := stringEnd(v, i)
		key := v[i+1 : kend-1]
		vs := skipSpace(v, skipSpace(v, kend)+1)
		ve := skipValue(v, vs)
		fn(key, v[vs:ve])
		i = skipSpace(v, ve)
		if i >= len(v) || v[i] != ',' {
			return
		}
		i = skipSpace(v, i+1)
	}
}

// elements calls fn for each element of the array v.
func elements(v []byte, fn func(el []byte)) {
	i := skipSpace(v, 1)
	if i < len(v) && v[i] == ']' {
		return
	}
	for i < len(v) {
		ve := skipValue(v, i)
		fn(v[i:ve])
		i = skipSpace(v, ve)
		if i >= len(v) || v[i] != ',' {
			return
		}
		i = skipSpace(v, i+1)
	}
}

// skipValue returns the offset just past the valid value starting at v[i],
// without checking it again.
func skipValue(v []byte, i int) int {
	switch v[i] {
	case '"':
		return stringEnd(v, i)
	case '{', '[':
		depth := 0
		for ; i < len(v); i++ {
			switch v[i] {
			case '"':
				i = stringEnd(v, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(v)
	}
	for i < len(v) && !isSpace(v[i]) && v[i] != ',' && v[i] != '}' && v[i] != ']' {
		i++
	}
	return i
}

// stringEnd returns the offset past the closing quote of the valid string
// starting at v[i].
func stringEnd(v []byte, i int) int {
	for j := i + 1; j < len(v); j++ {
		for j+8 <= len(v) && endByte[v[j]]|endByte[v[j+1]]|endByte[v[j+2]]|endByte[v[j+3]]|
			endByte[v[j+4]]|endByte[v[j+5]]|endByte[v[j+6]]|endByte[v[j+7]] == 0 {
			j += 8
		}
		if j >= len(v) {
			break
		}
		switch v[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(v)
}

// stringByte is 1 for the bytes a string may hold without a second look at
// them in a valid line: plainByte's, and those of multi-byte sequences
// (encoding/json accepts invalid UTF-8, decoding it as U+FFFD).
var stringByte = func() (t [256]byte) {
	t = plainByte
	for c := 0x80; c < 0x100; c++ {
		t[c] = 1
	}
	return t
}()

// endByte is 1 for the bytes stringEnd stops at.
var endByte = [256]byte{'"': 1, '\\': 1}

// stringOf decodes the valid JSON string v as encoding/json does: escapes
// resolved, invalid UTF-8 and lone surrogates replaced by U+FFFD.
func stringOf(v []byte) string {
	end, plain, _ := scanString(v, 0)
	if plain {
		return string(v[1 : end-1])
	}
	return string(jsonstr.Append(make([]byte, 0, end), v[1:end-1]))
}

// interner shares the strings a trace repeats — row ids, turn ids, roles,
// types — so that a row read back in many chunk answers is allocated once.
// A nil interner shares nothing.
type interner map[string]string

// str decodes the JSON string v, shared.
func (in interner) str(v []byte) string {
	end, plain, _ := scanString(v, 0)
	if !plain || in == nil {
		return stringOf(v)
	}
	if s, ok := in[string(v[1:end-1])]; ok {
		return s
	}
	s := string(v[1 : end-1])
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

package rawjson

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The functions below check JSON as Scan does and say what is wrong, in
// encoding/json's words, for a reader that reports it (a trace's
// "malformed JSON: ..."); the scanner is the same.

// ErrDepth is a value nested deeper than MaxDepth.
var ErrDepth = errors.New("exceeded max depth")

// SyntaxError is input that is not valid JSON at byte Offset.
type SyntaxError struct {
	Msg    string // as encoding/json words it: "invalid character 'x' after object key"
	Offset int
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s (offset %d)", e.Msg, e.Offset) }

// syntaxErrorAt is the error of b at b[i], which came where ctx says (""
// when the input ended there).
func syntaxErrorAt(b []byte, i int, ctx string) error {
	if i >= len(b) {
		return &SyntaxError{"unexpected end of JSON input", i}
	}
	return &SyntaxError{fmt.Sprintf("invalid character %s %s", strconv.QuoteRune(rune(b[i])), ctx), i}
}

// Unexpected is the error of b at b[i], which came where ctx says ("after
// array element"), for a reader that checks a part of the grammar itself.
func Unexpected(b []byte, i int, ctx string) error {
	if i >= len(b) {
		return syntaxErrorAt(b, i, "")
	}
	return syntaxErrorAt(b, i, ctx)
}

// Check returns nil when b is exactly one valid JSON value (white space
// around it allowed), else what is wrong.
func Check(b []byte) error {
	s := scanner{raw: b, compact: true}
	if !s.value() {
		return s.err()
	}
	return nil
}

// Value checks the value that starts at b[i] (no white space before it),
// nested depth levels deep, and returns the index after it.
func Value(b []byte, i, depth int) (int, error) {
	s := scanner{raw: b, i: i, one: true, limit: MaxDepth - depth}
	if !s.value() {
		return s.errAt, s.err()
	}
	return s.i, nil
}

// Object checks the object that starts at b[i] (a '{'), nested depth
// levels deep, calling value for each member with its key (the string's
// body, escapes kept), whether the key is plain (no escape, valid UTF-8)
// and the index where its value starts: value checks the value (Value, or
// a reader's own) and returns the index after it. Object returns the
// index after the object.
func Object(b []byte, i, depth int, value func(key []byte, plain bool, vs int) (int, error)) (int, error) {
	if depth >= MaxDepth {
		return i, ErrDepth
	}
	s := scanner{raw: b, i: i + 1}
	s.ws()
	if s.i < len(b) && b[s.i] == '}' {
		return s.i + 1, nil
	}
	for {
		if s.i >= len(b) || b[s.i] != '"' {
			return s.i, Unexpected(b, s.i, "looking for beginning of object key string")
		}
		k0 := s.i
		if !s.str() {
			return s.errAt, s.err()
		}
		key := b[k0+1 : s.i-1]
		s.ws()
		if s.i >= len(b) || b[s.i] != ':' {
			return s.i, Unexpected(b, s.i, "after object key")
		}
		s.i++
		s.ws()
		end, err := value(key, Plain(key), s.i)
		if err != nil {
			return end, err
		}
		s.i = end
		s.ws()
		if s.i < len(b) && b[s.i] == ',' {
			s.i++
			s.ws()
			continue
		}
		if s.i < len(b) && b[s.i] == '}' {
			return s.i + 1, nil
		}
		return s.i, Unexpected(b, s.i, "after object key:value pair")
	}
}

// Plain reports whether the body of a valid string holds no escape and
// is valid UTF-8: its bytes are its text.
func Plain(body []byte) bool { return bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) }

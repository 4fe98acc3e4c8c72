// Package jsonstr decodes the body of a JSON string (the bytes between its
// quotes) one rune at a time, as encoding/json does: escapes, surrogate
// pairs, and U+FFFD for each invalid UTF-8 byte or lone surrogate. The
// project's one-pass scanners use it where encoding/json would decode more
// than they need.
package jsonstr

import (
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeRune decodes the rune that starts at body[i] and returns it with
// the index of the next one. ok is false when an escape is cut short,
// which a valid string's body never does.
func DecodeRune(body []byte, i int) (r rune, next int, ok bool) {
	if c := body[i]; c != '\\' {
		if c < utf8.RuneSelf {
			return rune(c), i + 1, true
		}
		r, size := utf8.DecodeRune(body[i:])
		return r, i + size, true
	}
	if i+1 >= len(body) || body[i+1] == 'u' && i+6 > len(body) {
		return 0, i, false
	}
	switch body[i+1] {
	case 'u':
		r, i = hex4(body[i+2:i+6]), i+6
		if !utf16.IsSurrogate(r) {
			return r, i, true
		}
		r2 := rune(-1)
		if i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
			r2 = hex4(body[i+2 : i+6])
		}
		if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
			return d, i + 6, true
		}
		return utf8.RuneError, i, true
	case 'b':
		return '\b', i + 2, true
	case 'f':
		return '\f', i + 2, true
	case 'n':
		return '\n', i + 2, true
	case 'r':
		return '\r', i + 2, true
	case 't':
		return '\t', i + 2, true
	}
	return rune(body[i+1]), i + 2, true // '"', '\\', '/'
}

// Append appends the decoded body of a valid JSON string to dst.
func Append(dst, body []byte) []byte {
	for i := 0; i < len(body); {
		// Runs without escapes or invalid UTF-8 are copied as they are.
		j := i
		for j < len(body) && body[j] != '\\' && body[j] < utf8.RuneSelf {
			j++
		}
		dst = append(dst, body[i:j]...)
		if i = j; i == len(body) {
			break
		}
		r, next, ok := DecodeRune(body, i)
		if !ok {
			break
		}
		dst = utf8.AppendRune(dst, r)
		i = next
	}
	return dst
}

// hex4 is the value of four hexadecimal digits.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

package rawjson

import (
	"bytes"
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

// The strings of JSON: DecodeRune and AppendUnquoted decode the body of
// one (the bytes between its quotes) as encoding/json does: escapes,
// surrogate pairs, and U+FFFD for each invalid UTF-8 byte or lone
// surrogate. AppendString writes one.

// Unquote decodes the valid JSON string raw (quotes included), as
// json.Unmarshal does.
func Unquote(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body)
	}
	return string(AppendUnquoted(make([]byte, 0, len(body)), body))
}

// AppendUnquoted appends the decoded body of a valid JSON string to dst.
func AppendUnquoted(dst, body []byte) []byte {
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

// AppendString appends s as a JSON string the way JSON.stringify writes it:
// no HTML escaping, invalid UTF-8 replaced by U+FFFD.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c >= 0x20:
				dst = append(dst, c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

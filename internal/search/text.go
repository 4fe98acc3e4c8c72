package search

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// maxDepth bounds the containers a walk follows: encoding/json's nesting
// limit, which every stored payload is held to.
const maxDepth = 10000

// texts walks JSON values that are known to be valid and gives each
// string value decoded, keeping the path to it for Field.
type texts struct {
	stack []frame
	buf   []byte // the decoded string, when it has escapes
}

// frame is an open container of the walk: its current member's key
// (JSON text, quotes included) or element index.
type frame struct {
	object bool
	key    []byte // nil until the member's key is read
	index  int
}

// walk calls fn with every string value (not key) of the valid JSON value
// raw, decoded, in order, until fn returns false; it reports whether fn
// never did. The string passed is valid until fn returns.
func (t *texts) walk(raw []byte, fn func(s []byte) bool) bool {
	t.stack = t.stack[:0]
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case '{', '[':
			if len(t.stack) == maxDepth {
				return true
			}
			t.stack = append(t.stack, frame{object: c == '{'})
			i++
		case '}', ']':
			t.stack = t.stack[:len(t.stack)-1]
			i++
		case ',':
			if top := t.top(); top != nil {
				top.key = nil
				top.index++
			}
			i++
		case '"':
			end := rawjson.ValueEnd(raw, i) // the string's
			if end < 0 {
				return true
			}
			if top := t.top(); top != nil && top.object && top.key == nil {
				top.key = raw[i:end]
				i = end
				continue
			}
			if !fn(t.decode(raw[i+1 : end-1])) {
				return false
			}
			i = end
		default:
			i++
		}
	}
	return true
}

func (t *texts) top() *frame {
	if len(t.stack) == 0 {
		return nil
	}
	return &t.stack[len(t.stack)-1]
}

// decode returns the text of the JSON string body s (no quotes): s itself
// when it has no escape, else its decoding in t.buf. An escaped lone
// surrogate becomes U+FFFD, as encoding/json decodes it.
func (t *texts) decode(s []byte) []byte {
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		return s
	}
	b := append(t.buf[:0], s[:i]...)
	for i < len(s) {
		c := s[i]
		if c != '\\' {
			j := bytes.IndexByte(s[i:], '\\')
			if j < 0 {
				j = len(s) - i
			}
			b = append(b, s[i:i+j]...)
			i += j
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch e := s[i+1]; e {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'u':
			r, n := unicodeEscape(s[i:])
			b = utf8.AppendRune(b, r)
			i += n
			continue
		default: // '"', '\\', '/'
			b = append(b, e)
		}
		i += 2
	}
	t.buf = b
	return b
}

// unicodeEscape decodes the \uXXXX escape at the start of s, with the
// escape of a low surrogate after a high one, and returns the rune and
// the bytes used.
func unicodeEscape(s []byte) (rune, int) {
	r := hex4(s)
	if r < 0 {
		return utf8.RuneError, 2
	}
	if utf16.IsSurrogate(r) {
		if r2 := hex4(s[6:]); len(s) >= 12 && s[6] == '\\' && r2 >= 0 {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

// hex4 decodes the four hex digits after `\u` at the start of s, or -1.
func hex4(s []byte) rune {
	if len(s) < 6 || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c|0x20 && c|0x20 <= 'f':
			c = c | 0x20 - 'a' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// field returns the path of the string value fn was last given, in jq's
// syntax from the value walked (".content[0].text"; keys that are not
// identifiers quoted: .["a b"]), behind prefix.
func (t *texts) field(prefix string) string {
	b := []byte(prefix)
	for _, f := range t.stack {
		if !f.object {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
			continue
		}
		var k texts
		key := k.decode(f.key[1 : len(f.key)-1])
		if identifier(key) {
			b = append(b, '.')
			b = append(b, key...)
		} else {
			b = append(b, '[')
			b = rawjson.AppendString(b, string(key))
			b = append(b, ']')
		}
	}
	return string(b)
}

// identifier reports whether jq takes key after a dot: [A-Za-z_][A-Za-z0-9_]*.
func identifier(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	for i, c := range key {
		letter := c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

package inspect

import (
	"unicode"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// shrinkTexts returns the JSON object data with the long "text" and
// "content" strings in it cut to their first n runes and one more, so that
// decoding it costs what a short payload does. A renderer that looks at no
// more than the first n runes of those texts, and at whether more follow
// and whether they are blank (strings.TrimSpace), sees the same: a string
// is cut only when the runes kept hold one that is not white space.
// Everything else is copied as it is, so the payload decodes into the same
// structure and fails to decode where the original does. data must be
// valid JSON (a reader validated it); the result is nil when nothing was
// cut.
func shrinkTexts(data []byte, n int) []byte {
	s := shrinker{in: data, keep: n + 1, cutAt: 12 * (n + 1)}
	if s.value(skipWS(data, 0)) < 0 || !s.cut {
		return nil
	}
	return append(s.out, data[s.from:]...)
}

type shrinker struct {
	in    []byte
	out   []byte
	from  int // in[from:] is not yet copied to out
	keep  int // runes to keep
	cutAt int // strings longer than this many bytes are cut
	cut   bool
}

// value walks the JSON value at in[i:] and returns its end, or -1 when
// the input is not valid JSON after all.
func (s *shrinker) value(i int) int {
	in := s.in
	if i >= len(in) {
		return -1
	}
	switch in[i] {
	case '{':
		for i = skipWS(in, i+1); i < len(in) && in[i] != '}'; {
			kEnd := rawjson.ValueEnd(in, i)
			if kEnd < 0 || in[i] != '"' {
				return -1
			}
			k := in[i+1 : kEnd-1] // an escaped key is never cut
			if i = skipWS(in, kEnd); i >= len(in) || in[i] != ':' {
				return -1
			}
			i = skipWS(in, i+1)
			if i < len(in) && in[i] == '"' && (string(k) == "text" || string(k) == "content") {
				i = s.str(i)
			} else {
				i = s.value(i)
			}
			if i < 0 {
				return -1
			}
			if i = skipWS(in, i); i < len(in) && in[i] == ',' {
				i = skipWS(in, i+1)
			}
		}
	case '[':
		for i = skipWS(in, i+1); i < len(in) && in[i] != ']'; {
			if i = s.value(i); i < 0 {
				return -1
			}
			if i = skipWS(in, i); i < len(in) && in[i] == ',' {
				i = skipWS(in, i+1)
			}
		}
	default:
		return rawjson.ValueEnd(in, i)
	}
	if i >= len(in) {
		return -1
	}
	return i + 1
}

// str cuts the string at in[i:] if it is long and returns its end.
func (s *shrinker) str(i int) int {
	end := rawjson.ValueEnd(s.in, i)
	if end < 0 || end-i <= s.cutAt || !rawjson.Valid(s.in[i:end]) {
		return end // short, or not a string the original decodes
	}
	head, blank := unquotePrefix(s.in[i+1:end-1], s.keep)
	if blank {
		return end // only white space so far: whether it is blank needs it all
	}
	s.out = append(s.out, s.in[s.from:i]...)
	s.out = rawjson.AppendString(s.out, string(head))
	s.from, s.cut = end, true
	return end
}

// unquotePrefix decodes the first n runes of the body of a valid JSON string
// (between its quotes) as encoding/json decodes it: escapes, surrogate
// pairs, and U+FFFD for each invalid UTF-8 byte or lone surrogate. blank
// reports that every rune decoded is white space (unicode.IsSpace).
func unquotePrefix(body []byte, n int) (out []byte, blank bool) {
	blank = true
	for i := 0; i < len(body) && n > 0; n-- {
		r, next, ok := rawjson.DecodeRune(body, i)
		if !ok {
			break // not a valid string after all
		}
		i = next
		blank = blank && unicode.IsSpace(r)
		out = utf8.AppendRune(out, r)
	}
	return out, blank
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

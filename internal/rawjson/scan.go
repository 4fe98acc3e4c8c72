package rawjson

import (
	"encoding/binary"
	"math/bits"
)

// MaxDepth is encoding/json's nesting limit: json.Valid rejects a value
// nested deeper than this.
const MaxDepth = 10000

// Scan reports whether raw is exactly one valid JSON value (RFC 8259),
// accepting exactly what json.Valid accepts (white space around the value,
// any bytes of 0x20 and above in strings, valid UTF-8 or not, nesting up to
// encoding/json's limit), and whether it is compact: no white space outside
// strings. It is the readers' hot path, so it validates and checks
// compactness in one pass, strings eight bytes at a time.
func Scan(raw []byte) (valid, compact bool) {
	s := scanner{raw: raw, compact: true}
	return s.value(), s.compact
}

// Valid reports whether raw is exactly one valid JSON value, as Scan does.
func Valid(raw []byte) bool {
	valid, _ := Scan(raw)
	return valid
}

// ScanObject is Scan that also records where the members of the object
// raw is are, so that splitting it costs no second walk: the first
// len(spans) of them in spans, and n counts them all (repeated keys
// included). When raw is valid but not an object, n is 0.
func ScanObject(raw []byte) (spans [Spans]Span, n int, valid, compact bool) {
	s := scanner{raw: raw, compact: true, split: true, v0: -1}
	valid = s.value()
	return s.spans, s.n, valid, s.compact
}

type scanner struct {
	raw     []byte
	i       int
	compact bool
	// stack holds one bit per open container, set for an object; deep
	// values spill into more.
	stack [2]uint64
	more  []uint64
	depth int
	// split, when set, records where the members of the top-level object
	// are as they are scanned: the first len(spans) of them, and n counts
	// them all. v0 is where the value of the member being scanned starts
	// (-1: none).
	split bool
	spans [Spans]Span
	n     int
	v0    int
	// one scans one value from i, no white space around it, with limit
	// levels of nesting left (see Value); else the whole input is one
	// value and limit is 0, meaning MaxDepth.
	one   bool
	limit int
	// Where and why the scan failed, for err: at errAt, in encoding/json's
	// words errCtx ("after object key"); deep when nested too deep.
	errAt  int
	errCtx string
	deep   bool
}

// fail records that the input is invalid at raw[i], which came where ctx
// says, and returns false.
func (s *scanner) fail(i int, ctx string) bool {
	s.errAt, s.errCtx = i, ctx
	return false
}

// err is the error of a failed scan.
func (s *scanner) err() error {
	if s.deep {
		return ErrDepth
	}
	return syntaxErrorAt(s.raw, s.errAt, s.errCtx)
}

// Spans is how many members ScanObject locates.
const Spans = 8

// Span locates a member of an object: its key raw[Key0:Key1] (a JSON
// string, quotes included) and its value raw[Val0:Val1].
type Span struct{ Key0, Key1, Val0, Val1 int }

// ws skips white space.
func (s *scanner) ws() {
	i := s.i
	for i < len(s.raw) && (s.raw[i] == ' ' || s.raw[i] == '\t' || s.raw[i] == '\r' || s.raw[i] == '\n') {
		i++
	}
	if i != s.i {
		s.compact = false
		s.i = i
	}
}

func (s *scanner) push(object bool) bool {
	if s.depth >= MaxDepth || s.one && s.depth >= s.limit {
		s.deep = true
		return false
	}
	w, b := s.depth/64, uint(s.depth%64)
	var word *uint64
	if w < len(s.stack) {
		word = &s.stack[w]
	} else {
		for len(s.more) <= w-len(s.stack) {
			s.more = append(s.more, 0)
		}
		word = &s.more[w-len(s.stack)]
	}
	if object {
		*word |= 1 << b
	} else {
		*word &^= 1 << b
	}
	s.depth++
	return true
}

// top reports whether the innermost open container is an object.
func (s *scanner) top() bool {
	d := s.depth - 1
	w, b := d/64, uint(d%64)
	if w < len(s.stack) {
		return s.stack[w]&(1<<b) != 0
	}
	return s.more[w-len(s.stack)]&(1<<b) != 0
}

// value scans the whole input as one value with optional white space
// around it, or with one set, the value at s.i.
func (s *scanner) value() bool {
	raw := s.raw
	if !s.one {
		s.ws()
	}
	for {
		// A value starts at s.i.
		if s.i >= len(raw) {
			return s.fail(s.i, "")
		}
		switch c := raw[s.i]; c {
		case '{':
			if !s.push(true) {
				return false
			}
			s.i++
			s.ws()
			if s.i < len(raw) && raw[s.i] == '}' {
				s.i++
				s.depth--
				break
			}
			if !s.key() {
				return false
			}
			continue
		case '[':
			if !s.push(false) {
				return false
			}
			s.i++
			s.ws()
			if s.i < len(raw) && raw[s.i] == ']' {
				s.i++
				s.depth--
				break
			}
			continue
		case '"':
			if !s.str() {
				return false
			}
		case 't':
			if !s.lit("true") {
				return false
			}
		case 'f':
			if !s.lit("false") {
				return false
			}
		case 'n':
			if !s.lit("null") {
				return false
			}
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if !s.num() {
				return false
			}
		default:
			return s.fail(s.i, "looking for beginning of value")
		}
		// After a value: close containers, or go on to the next member.
		for {
			if s.split && s.depth == 1 && s.v0 >= 0 {
				if s.n < len(s.spans) {
					s.spans[s.n].Val0, s.spans[s.n].Val1 = s.v0, s.i
				}
				s.n++
				s.v0 = -1
			}
			if s.depth == 0 && s.one {
				return true
			}
			s.ws()
			if s.depth == 0 {
				return s.i == len(raw) || s.fail(s.i, "after top-level value")
			}
			if s.i >= len(raw) {
				return s.fail(s.i, "")
			}
			obj := s.top()
			c := raw[s.i]
			if c == ',' {
				s.i++
				s.ws()
				if obj && !s.key() {
					return false
				}
				break
			}
			if (obj && c == '}') || (!obj && c == ']') {
				s.i++
				s.depth--
				continue
			}
			if obj {
				return s.fail(s.i, "after object key:value pair")
			}
			return s.fail(s.i, "after array element")
		}
	}
}

// key scans an object key and its colon, and the white space after it.
func (s *scanner) key() bool {
	k0 := s.i
	if s.i >= len(s.raw) || s.raw[s.i] != '"' {
		return s.fail(s.i, "looking for beginning of object key string")
	}
	if !s.str() {
		return false
	}
	k1 := s.i
	s.ws()
	if s.i >= len(s.raw) || s.raw[s.i] != ':' {
		return s.fail(s.i, "after object key")
	}
	s.i++
	s.ws()
	if s.split && s.depth == 1 {
		if s.n < len(s.spans) {
			s.spans[s.n].Key0, s.spans[s.n].Key1 = k0, k1
		}
		s.v0 = s.i
	}
	return true
}

func (s *scanner) lit(word string) bool {
	if len(s.raw)-s.i < len(word) || string(s.raw[s.i:s.i+len(word)]) != word {
		k := 0
		for s.i+k < len(s.raw) && s.raw[s.i+k] == word[k] {
			k++
		}
		return s.fail(s.i+k, "in literal "+word)
	}
	s.i += len(word)
	return true
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special reports, for eight bytes as a little-endian word, a bit in the
// high position of some byte iff one of them is '"', '\\' or below 0x20.
func special(w uint64) uint64 {
	q := w ^ (lsb * '"')
	b := w ^ (lsb * '\\')
	return ((q-lsb)&^q | (b-lsb)&^b | (w-lsb*0x20)&^w) & msb
}

// str scans a string starting at the opening quote.
func (s *scanner) str() bool {
	raw := s.raw
	i := s.i + 1
	for {
		for i+8 <= len(raw) {
			m := special(binary.LittleEndian.Uint64(raw[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(raw) {
			return s.fail(len(raw), "")
		}
		switch c := raw[i]; {
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(raw) {
				return s.fail(i+1, "")
			}
			switch raw[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(raw) || !isHex(raw[k]) {
						return s.fail(k, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return s.fail(i+1, "in string escape code")
			}
		case c < 0x20:
			return s.fail(i, "in string literal")
		default:
			i++ // a byte the word test flagged by borrow, or the short tail
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// num scans a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) num() bool {
	raw, i := s.raw, s.i
	if i < len(raw) && raw[i] == '-' {
		i++
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case i < len(raw) && '1' <= raw[i] && raw[i] <= '9':
		for i++; i < len(raw) && isDigit(raw[i]); i++ {
		}
	default:
		return s.fail(i, "in numeric literal")
	}
	if i < len(raw) && raw[i] == '.' {
		i++
		if i >= len(raw) || !isDigit(raw[i]) {
			return s.fail(i, "after decimal point in numeric literal")
		}
		for i++; i < len(raw) && isDigit(raw[i]); i++ {
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if i >= len(raw) || !isDigit(raw[i]) {
			return s.fail(i, "in exponent of numeric literal")
		}
		for i++; i < len(raw) && isDigit(raw[i]); i++ {
		}
	}
	s.i = i
	return true
}

// AppendCompact appends the valid JSON value raw to dst without the white
// space outside its strings, as json.Compact does (which also leaves
// strings as they are).
func AppendCompact(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			end := StringEnd(raw, i)
			dst = append(dst, raw[i:end]...)
			i = end - 1
		case ' ', '\t', '\r', '\n':
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// IsCompact reports whether the valid JSON value raw has no white space
// outside its strings.
func IsCompact(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			i = StringEnd(raw, i) - 1
		case ' ', '\t', '\r', '\n':
			return false
		}
	}
	return true
}

package rawjson

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// The walkers below read JSON already known to be valid (Scan accepted
// it), without its bounds checks.

// MaxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: dsh is a Node
// program, so every integer in a log must survive a float64.
const MaxSafeInteger = 1<<53 - 1

// Items returns the items of a JSON array, aliasing raw, which must be
// valid JSON; ok is false when raw is not an array.
func Items(raw []byte) (items [][]byte, ok bool) {
	return AppendItems(make([][]byte, 0, 8), raw)
}

// AppendItems is Items appending to items, which a hot caller keeps on
// its stack.
func AppendItems(items [][]byte, raw []byte) ([][]byte, bool) {
	i := SkipSpace(raw, 0)
	if i == len(raw) || raw[i] != '[' {
		return nil, false
	}
	for i++; ; {
		i = SkipSpace(raw, i)
		if raw[i] == ']' {
			return items, true
		}
		end := End(raw, i)
		items = append(items, raw[i:end:end])
		if i = SkipSpace(raw, end); raw[i] == ',' {
			i++
		}
	}
}

// SkipSpace returns the index of the first byte from raw[i] on that is not
// JSON's white space.
func SkipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// StringEnd returns the index after the string starting at raw[i].
func StringEnd(raw []byte, i int) int {
	for i++; ; i++ {
		// Skip eight bytes at a time to the next quote or backslash.
		for i+8 <= len(raw) {
			w := binary.LittleEndian.Uint64(raw[i:])
			q, b := w^(lsb*'"'), w^(lsb*'\\')
			if m := ((q-lsb)&^q | (b-lsb)&^b) & msb; m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		switch raw[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
	}
}

// End returns the index after the value starting at raw[i] of JSON
// already validated, so without the bounds checks of ValueEnd, which reads
// unvalidated bytes.
func End(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return StringEnd(raw, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch raw[i] {
			case '"':
				i = StringEnd(raw, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(raw) && !strings.ContainsRune(",}] \t\r\n", rune(raw[i])) {
		i++
	}
	return i
}

// IsObject reports whether raw starts, after white space, with '{'.
func IsObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

// SafeInt parses a JSON number that must be a safe integer (JSON.parse
// accepts 3.0 and 1e3 as integers, so this does too).
func SafeInt(raw []byte) (int64, error) {
	if n, ok := smallInt(raw); ok {
		return n, nil
	}
	s := string(raw)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > MaxSafeInteger || n < -MaxSafeInteger {
			return 0, fmt.Errorf("%s is not a safe integer", s)
		}
		return n, nil
	}
	if len(s) == 0 || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
		return 0, fmt.Errorf("%.40s is not a number", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Trunc(f) != f || math.Abs(f) > MaxSafeInteger {
		return 0, fmt.Errorf("%.40s is not a safe integer", s)
	}
	return int64(f), nil
}

// smallInt parses raw when it is an optional '-' and 1 to 15 digits,
// which strconv.ParseInt accepts as a safe integer, without allocating.
func smallInt(raw []byte) (int64, bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(raw) {
		n = -n
	}
	return n, true
}

// IsNegZero reports whether a JSON number is a negative zero.
func IsNegZero(raw []byte) bool {
	f, err := strconv.ParseFloat(string(raw), 64)
	return err == nil && f == 0 && math.Signbit(f)
}

// Members calls fn with each member of the valid JSON object raw, in
// order, until fn returns false: its key as a JSON string (quotes and
// escapes kept) and its value, aliasing raw.
func Members(raw []byte, fn func(key, val []byte) bool) {
	i := SkipSpace(raw, 0) + 1 // past '{'
	for {
		i = SkipSpace(raw, i)
		if raw[i] == '}' {
			return
		}
		end := StringEnd(raw, i)
		key := raw[i:end]
		i = SkipSpace(raw, SkipSpace(raw, end)+1) // past ':'
		vend := End(raw, i)
		if !fn(key, raw[i:vend:vend]) {
			return
		}
		if i = SkipSpace(raw, vend); raw[i] == ',' {
			i++
		}
	}
}

package termui

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// PlainField is a field of a line of tab-separated fields: Escape keeps
// it on its line and in its column, whatever it holds.
func PlainField(s string) string { return Escape(s) }

// spaces makes the line breaks and tabs of a message spaces.
var spaces = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

// OneLine makes a message one line of text for a terminal: its line
// breaks and tabs become spaces, and whatever else could move the cursor
// or change the terminal is escaped (Escape).
func OneLine(s string) string {
	s = spaces.Replace(s) // byte by byte: invalid UTF-8 stays as it is, for printable
	if printable(s) {
		return s
	}
	return strconv.Quote(s)
}

// Escape is how every value that comes from a store or a log (an id, a
// folder name, a path, a cwd) reaches a terminal or a line of fields: as
// itself when every character of it is printable (UTF-8 text, however
// far from ASCII, prints as itself), else as a Go quoted string, in which
// control characters (ESC, BEL, a line break, a tab), invalid UTF-8 and
// invisible formatting characters (a right-to-left override) are escapes
// such as \x1b, \n or \u202e: nothing in it can move the cursor, change
// the terminal's state or break a row, and the quotes tell it from a value
// that holds a backslash (a value that starts with a quote is quoted too).
func Escape(s string) string {
	if printable(s) && !strings.HasPrefix(s, `"`) {
		return s
	}
	return strconv.Quote(s)
}

// printable reports whether s is valid UTF-8 of printable characters
// (strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the
// ASCII space).
func printable(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
			return false
		}
		i += n
	}
	return true
}

package sessionview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/rawjson"
	"github.com/dshctl/dshctl/internal/search"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/mattn/go-runewidth"
)

// GrepPrinter prints grep's results (a search.Printer): the pieces each
// session's search makes (Match, File, Count), given in the order of the
// sessions, as the format asks. Pieces are made on the searching
// goroutines; what depends on the pieces before (a blank line between
// sessions, a comma) is added as they are written.
type GrepPrinter struct {
	o    termui.Out
	mode search.Mode
	w    *bufio.Writer
	// last is the job of the last piece written, -1 before the first;
	// items counts the pieces written.
	last, items int
}

// NewGrepPrinter prints grep's results on o.Stdout, and the sessions that
// cannot be searched on o.Stderr.
func NewGrepPrinter(o termui.Out, mode search.Mode) *GrepPrinter {
	return &GrepPrinter{o: o, mode: mode, w: bufio.NewWriterSize(o.Stdout, 64<<10), last: -1}
}

// Write writes a piece of job's output.
func (p *GrepPrinter) Write(job int, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	switch {
	case p.o.Format == termui.FormatJSON && p.items == 0:
		p.w.WriteString("[\n")
	case p.o.Format == termui.FormatJSON:
		p.w.WriteString(",\n")
	case p.o.Format == termui.FormatTable && p.o.TTY && p.mode == search.Lines && job != p.last && p.last >= 0:
		p.w.WriteByte('\n') // a blank line between the sessions' headings
	}
	p.items++
	p.last = job
	_, err := p.w.Write(b)
	return err
}

// Fail reports on stderr that job's session could not be searched (err
// is a *search.SessionError), after what was printed before it.
func (p *GrepPrinter) Fail(job int, err error) error {
	if err := p.w.Flush(); err != nil {
		return err
	}
	msg := termui.OneLineError(err)
	if se, ok := err.(*search.SessionError); ok {
		msg = fmt.Sprintf("session %q: %s", se.ID, Reason(se.Err))
	}
	_, werr := fmt.Fprintf(p.o.Stderr, "dshctl: grep: %s\n", msg)
	return werr
}

// Close ends the output.
func (p *GrepPrinter) Close() error {
	if p.o.Format == termui.FormatJSON && p.mode != search.Quiet {
		if p.items == 0 {
			p.w.WriteString("[]\n")
		} else {
			p.w.WriteString("\n]\n")
		}
	}
	return p.w.Flush()
}

// Match appends what is printed of match m of session s to dst; first
// says m is the session's first.
func (p *GrepPrinter) Match(dst []byte, s *search.SessionInfo, m *search.Match, first bool) []byte {
	switch {
	case p.o.IsJSON():
		return p.appendJSON(dst, s, m)
	case p.o.TTY:
		if first {
			dst = p.appendHeading(dst, s)
		}
		return p.appendExcerpt(dst, m)
	}
	dst = append(dst, termui.Escape(s.ID)...)
	dst = append(dst, '\t')
	dst = strconv.AppendInt(dst, m.Seq, 10)
	dst = append(dst, '\t')
	if m.HasTurn {
		dst = strconv.AppendInt(dst, m.Turn, 10)
	}
	dst = append(dst, '\t')
	dst = appendPlain(dst, []byte(m.Type))
	dst = append(dst, '\t')
	dst = appendPlain(dst, m.Text)
	return append(dst, '\n')
}

// File appends what -l prints of a session with a match.
func (p *GrepPrinter) File(dst []byte, s *search.SessionInfo) []byte {
	if p.o.IsJSON() {
		start := len(dst)
		dst = append(dst, `{"id":`...)
		dst = rawjson.AppendString(dst, s.ID)
		return p.endJSON(append(dst, '}'), start)
	}
	dst = append(dst, termui.Escape(s.ID)...)
	return append(dst, '\n')
}

// Count appends what -c prints of a session with n matching lines.
func (p *GrepPrinter) Count(dst []byte, s *search.SessionInfo, n int) []byte {
	if p.o.IsJSON() {
		start := len(dst)
		dst = append(dst, `{"id":`...)
		dst = rawjson.AppendString(dst, s.ID)
		dst = append(dst, `,"matchCount":`...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		return p.endJSON(append(dst, '}'), start)
	}
	dst = append(dst, termui.Escape(s.ID)...)
	dst = append(dst, '\t')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\n')
}

// endJSON ends the JSON value dst[start:]: a line of its own with -o
// jsonl; with -o json, indented as an element of the array (as every -o
// json is), Write putting the separators between the elements.
func (p *GrepPrinter) endJSON(dst []byte, start int) []byte {
	if p.o.Format == termui.FormatJSONL {
		return append(dst, '\n')
	}
	var b bytes.Buffer
	b.WriteString("  ")
	if err := json.Indent(&b, dst[start:], "  ", "  "); err != nil {
		return dst // cannot be: the value was just written
	}
	return append(dst[:start], b.Bytes()...)
}

// appendJSON appends the JSON of a match, its keys in a fixed order,
// every one present (null when it does not apply).
func (p *GrepPrinter) appendJSON(dst []byte, s *search.SessionInfo, m *search.Match) []byte {
	start := len(dst)
	dst = append(dst, `{"id":`...)
	dst = rawjson.AppendString(dst, s.ID)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, m.Seq, 10)
	dst = append(dst, `,"turn":`...)
	if m.HasTurn {
		dst = strconv.AppendInt(dst, m.Turn, 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"type":`...)
	dst = rawjson.AppendString(dst, m.Type)
	dst = append(dst, `,"time":`...)
	dst = rawjson.AppendString(dst, termui.Timestamp(m.Time))
	dst = append(dst, `,"timeMs":`...)
	dst = strconv.AppendInt(dst, m.Time, 10)
	dst = append(dst, `,"field":`...)
	if m.Field != "" {
		dst = rawjson.AppendString(dst, m.Field)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"lineNumber":`...)
	if m.Line > 0 {
		dst = strconv.AppendInt(dst, int64(m.Line), 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"text":`...)
	dst = appendJSONBytes(dst, m.Text)
	dst = append(dst, `,"submatches":[`...)
	for i, sp := range m.Spans {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"match":`...)
		dst = appendJSONBytes(dst, m.Text[sp[0]:sp[1]])
		dst = append(dst, `,"start":`...)
		dst = strconv.AppendInt(dst, int64(sp[0]), 10)
		dst = append(dst, `,"end":`...)
		dst = strconv.AppendInt(dst, int64(sp[1]), 10)
		dst = append(dst, '}')
	}
	dst = append(dst, "]}"...)
	return p.endJSON(dst, start)
}

// appendJSONBytes appends text as a JSON string (invalid UTF-8 as U+FFFD).
func appendJSONBytes(dst, text []byte) []byte {
	return rawjson.AppendString(dst, string(text))
}

// appendPlain appends b as one tab-separated field: tabs and line breaks
// become spaces.
func appendPlain(dst, b []byte) []byte {
	for _, c := range b {
		if c == '\t' || c == '\n' || c == '\r' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// appendHeading appends the line that starts a session's matches on a
// terminal: its id and project.
func (p *GrepPrinter) appendHeading(dst []byte, s *search.SessionInfo) []byte {
	dst = p.style(dst, termui.Magenta, termui.Escape(s.ID))
	if s.Cwd != "" {
		dst = append(dst, "  "...)
		dst = p.style(dst, termui.Dim, termui.Escape(s.Cwd))
	}
	return append(dst, '\n')
}

func (p *GrepPrinter) style(dst []byte, st termui.Style, s string) []byte {
	if !p.o.Colour {
		return append(dst, s...)
	}
	return termui.AppendStyled(dst, st, s)
}

// appendExcerpt appends a match for people: its seq, turn and type, then
// the line cut to the terminal's width around its first match, the
// matches highlighted.
func (p *GrepPrinter) appendExcerpt(dst []byte, m *search.Match) []byte {
	label := strconv.FormatInt(m.Seq, 10)
	dst = p.style(dst, termui.Green, label)
	turn := "  turn -  "
	if m.HasTurn {
		turn = "  turn " + strconv.FormatInt(m.Turn, 10) + "  "
	}
	typ := termui.OneLine(m.Type)
	dst = append(dst, turn...)
	dst = append(dst, typ...)
	dst = append(dst, "  "...)
	used := len(label) + len(turn) + runewidth.StringWidth(typ) + 2
	room := 0 // no limit
	if p.o.Width > 0 {
		room = max(p.o.Width-used, 20)
	}
	return append(appendCut(dst, m.Text, m.Spans, room, p.o.Colour), '\n')
}

// appendCut appends text made printable (rune by rune, see printable)
// in at most room columns (0: all of it), starting far enough before its
// first match to show it, with … where it is cut; with colour, the
// matches in sgrMatch.
func appendCut(dst, text []byte, spans [][]int, room int, colour bool) []byte {
	start, end := 0, len(text)
	if room > 0 && !fits(text, room) {
		if len(spans) > 0 {
			start = spans[0][0]
		}
		// Up to a third of the room before the first match, cut at a rune.
		for w := 0; start > 0; {
			_, size := utf8.DecodeLastRune(text[:start])
			rw := cellWidth(text[start-size:])
			if w+rw > room/3 {
				break
			}
			w += rw
			start -= size
		}
		avail := room - 1 // the … at the end
		if start > 0 {
			avail-- // and at the start
		}
		end = start
		w := 0
		for end < len(text) {
			_, size := utf8.DecodeRune(text[end:])
			rw := cellWidth(text[end:])
			if w+rw > avail {
				break
			}
			w += rw
			end += size
		}
		if end == len(text) {
			// The end shows: the room left, and that of the … not
			// printed there, goes before.
			for avail++; start > 0; {
				_, size := utf8.DecodeLastRune(text[:start])
				rw := cellWidth(text[start-size:])
				if w+rw > avail {
					break
				}
				w += rw
				start -= size
			}
		}
	}
	if start > 0 {
		dst = append(dst, "…"...)
	}
	si, in := 0, false
	for i := start; i < end; {
		if colour {
			if in && i >= spans[si][1] {
				dst = termui.AppendReset(dst)
				in = false
				si++
			}
			for !in && si < len(spans) && (spans[si][1] <= i || spans[si][0] == spans[si][1]) {
				si++
			}
			if !in && si < len(spans) && spans[si][0] <= i {
				dst = append(dst, termui.BoldRed...)
				in = true
			}
		}
		r, size := utf8.DecodeRune(text[i:])
		dst = utf8.AppendRune(dst, printable(r, size))
		i += size
	}
	if in {
		dst = termui.AppendReset(dst)
	}
	if end < len(text) {
		dst = append(dst, "…"...)
	}
	return dst
}

// fits reports whether text, printed, is at most room columns wide.
func fits(text []byte, room int) bool {
	w := 0
	for i := 0; i < len(text); {
		_, size := utf8.DecodeRune(text[i:])
		if w += cellWidth(text[i:]); w > room {
			return false
		}
		i += size
	}
	return true
}

// cellWidth is the width of the first rune of b on a terminal, as it is
// printed (printable).
func cellWidth(b []byte) int {
	r, size := utf8.DecodeRune(b)
	return runewidth.RuneWidth(printable(r, size))
}

// printable is how a rune of a line is shown on a terminal: a tab as a
// space, a control character (or a byte that is not UTF-8) as U+FFFD.
func printable(r rune, size int) rune {
	switch {
	case r == '\t' || r == '\r':
		return ' '
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r == utf8.RuneError && size == 1):
		return '\uFFFD'
	}
	return r
}

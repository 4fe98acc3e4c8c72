// Package search finds the events of session logs that match a pattern:
// the engine of `dshctl grep`. A Pattern is matched line by line, against
// the text an event holds (the string values of its data, decoded) or its
// canonical JSON line; Session searches one log, and Sessions many, in
// parallel, giving their results in a fixed order.
package search

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PatternOptions say how a pattern is read.
type PatternOptions struct {
	// Fixed takes the pattern as a string, not a regular expression.
	Fixed bool
	// IgnoreCase matches letters of either case (Unicode simple folding).
	IgnoreCase bool
}

// Pattern is a compiled pattern. It matches within one line of text: a
// match never holds a line break.
type Pattern struct {
	re *regexp.Regexp
	// lit, when not nil, is a string every match holds (in any case when
	// fold): the fast check before the regular expression runs.
	lit  []byte
	fold bool
	// rare is the byte of lit (in its two cases when fold) a search
	// for it looks for first.
	rare int
	// slash: lit holds a '/', which a JSON writer may escape as \/.
	slash bool
	// dfa, when not nil, tells the lines that match faster than re: those
	// that hold lit when dfaLit (lit is selective), else every line. It
	// is nil for an expression that is lit itself.
	dfa    *dfaProg
	dfaLit bool
}

// ErrLineBreak is the error of a pattern that could only match a line
// break: lines are matched one at a time.
var ErrLineBreak = errors.New("the pattern matches a line break, and lines are matched one at a time")

// PatternError is a pattern that does not compile.
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string { return fmt.Sprintf("pattern %q: %v", e.Pattern, e.Err) }
func (e *PatternError) Unwrap() error { return e.Err }

// Compile compiles expr, a regular expression in Go's (RE2) syntax, or a
// string with o.Fixed. As in ripgrep, a match stays within one line: no
// part of the expression matches a line break (`.`, `\s`, `[^a]` skip it),
// `^` and `$` match at the start and end of each line, and an expression
// that holds a line break itself (`a\nb`) is an error.
func Compile(expr string, o PatternOptions) (*Pattern, error) {
	src := expr
	if o.Fixed {
		if strings.ContainsAny(expr, "\n") {
			return nil, &PatternError{expr, ErrLineBreak}
		}
		src = regexp.QuoteMeta(expr)
	}
	// Not OneLine: ^ and $ match at the start and end of every line.
	flags := syntax.Perl &^ syntax.OneLine
	if o.IgnoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(src, flags)
	if err != nil {
		return nil, &PatternError{expr, err}
	}
	if err := withoutLineBreaks(tree); err != nil {
		return nil, &PatternError{expr, err}
	}
	tree = tree.Simplify()
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, &PatternError{expr, err}
	}
	p := &Pattern{re: re}
	if lit, fold := required(tree); len(lit) > 0 {
		p.setLiteral(lit, fold)
	}
	if p.lit == nil || tree.Op != syntax.OpLiteral {
		p.dfa = newDFAProg(re.String())
		p.dfaLit = p.dfa != nil && p.lit != nil && p.selective()
	}
	return p, nil
}

// withoutLineBreaks makes every part of t skip '\n', as a line-by-line
// search must: `.` and classes lose it, and a literal line break is
// ErrLineBreak.
func withoutLineBreaks(t *syntax.Regexp) error {
	switch t.Op {
	case syntax.OpAnyChar:
		t.Op = syntax.OpAnyCharNotNL
	case syntax.OpLiteral:
		if slicesContains(t.Rune, '\n') {
			return ErrLineBreak
		}
	case syntax.OpCharClass:
		t.Rune = removeNL(t.Rune)
		if len(t.Rune) == 0 {
			return ErrLineBreak // only a line break was in it
		}
	}
	for _, s := range t.Sub {
		if err := withoutLineBreaks(s); err != nil {
			return err
		}
	}
	return nil
}

func slicesContains(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// removeNL takes '\n' out of the ranges of a class (pairs lo, hi).
func removeNL(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= '\n' && '\n' <= hi {
			if lo < '\n' {
				out = append(out, lo, '\n'-1)
			}
			if hi > '\n' {
				out = append(out, '\n'+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// required returns a string every match of t holds, as long as it can
// find (nil when it finds none), and whether it holds it in any case.
// Only ASCII letters are taken as folding: a run with other folding
// letters, or with k or s (which fold to the Kelvin sign and the long s),
// is cut there.
func required(t *syntax.Regexp) (lit []byte, fold bool) {
	switch t.Op {
	case syntax.OpLiteral:
		return literalRun([]*syntax.Regexp{t})
	case syntax.OpCapture, syntax.OpPlus:
		return required(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return required(t.Sub[0])
		}
	case syntax.OpConcat:
		var best []byte
		var bestFold bool
		take := func(l []byte, f bool) {
			if len(l) > len(best) || (len(l) == len(best) && bestFold && !f) {
				best, bestFold = l, f
			}
		}
		for i := 0; i < len(t.Sub); {
			if t.Sub[i].Op == syntax.OpLiteral {
				j := i
				for j < len(t.Sub) && t.Sub[j].Op == syntax.OpLiteral {
					j++
				}
				take(literalRun(t.Sub[i:j]))
				i = j
				continue
			}
			take(required(t.Sub[i]))
			i++
		}
		return best, bestFold
	}
	return nil, false
}

// literalRun is the longest part of the concatenated literals subs that a
// prefilter can look for: its characters are UTF-8 as written, letters of
// a folding literal ASCII only.
func literalRun(subs []*syntax.Regexp) ([]byte, bool) {
	var best, cur []byte
	var fold, bestFold, curFold bool
	flush := func() {
		if len(cur) > len(best) {
			best, bestFold = cur, curFold
		}
		cur, curFold = nil, false
	}
	for _, s := range subs {
		f := s.Flags&syntax.FoldCase != 0
		for _, r := range s.Rune {
			// U+FFFD also matches each byte that is not UTF-8.
			if r == utf8.RuneError || f && (r >= utf8.RuneSelf && foldsToOther(r) || r < utf8.RuneSelf && foldsOutOfASCII(r)) {
				flush()
				continue
			}
			cur = utf8.AppendRune(cur, r)
			curFold = curFold || (f && isASCIILetter(r))
		}
	}
	flush()
	fold = bestFold
	return best, fold
}

func isASCIILetter(r rune) bool { return 'a' <= r|0x20 && r|0x20 <= 'z' }

// foldsOutOfASCII reports whether the ASCII r folds to a rune outside
// ASCII, which an ASCII search in any case misses: k to the Kelvin sign,
// s to the long s.
func foldsOutOfASCII(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// foldsToOther reports whether r has another case.
func foldsToOther(r rune) bool {
	return strings.ToLower(string(r)) != strings.ToUpper(string(r)) || r == 'ſ' || r == 'K'
}

// setLiteral keeps the longest part of lit that JSON text holds as it is
// (without a character that JSON must escape: a quote, a backslash, a
// control character) as the pattern's required string, and picks its
// rarest byte to look for first.
func (p *Pattern) setLiteral(lit []byte, fold bool) {
	var best []byte
	for part := range bytes.FieldsFuncSeq(lit, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' }) {
		if len(part) > len(best) {
			best = part
		}
	}
	if len(best) == 0 {
		return
	}
	if fold {
		best = bytes.ToLower(best)
	}
	p.lit, p.fold = best, fold
	p.rare = rarest(best, fold)
	p.slash = bytes.IndexByte(best, '/') >= 0
}

// selective reports whether looking for the required string first skips
// most of a text: it is long, or its rarest byte is rare. A string such
// as "-" or "ab" is in most lines; the dfa reads them faster alone.
func (p *Pattern) selective() bool {
	c := p.lit[p.rare]
	f := byteFreq(c)
	if p.fold && isASCIILetter(rune(c)) {
		f = byteFreq(c|0x20) + byteFreq(c&^0x20)
	}
	return len(p.lit) >= 3 || f <= 40
}

// rarest returns the index of the byte of lit least frequent in session
// logs (byteFreq), the one a search looks for first; fold counts a
// letter's two cases.
func rarest(lit []byte, fold bool) int {
	best, at := 1<<30, 0
	for i, c := range lit {
		f := int(byteFreq(c))
		if fold && isASCIILetter(rune(c)) {
			f = int(byteFreq(c|0x20)) + int(byteFreq(c&^0x20))
		}
		if f < best {
			best, at = f, i
		}
	}
	return at
}

// byteFreq is a rough frequency of byte c in session logs (JSON records
// of English prose, code, paths, ids and numbers), in parts per 10,000: a
// search looks for a rare byte first, since each false candidate costs
// a comparison.
func byteFreq(c byte) uint16 {
	switch {
	case 'a' <= c && c <= 'z':
		return letterFreq[c-'a']
	case 'A' <= c && c <= 'Z':
		return letterFreq[c-'A'] / 16
	case '0' <= c && c <= '9':
		return 150
	case c == ' ':
		return 1200
	case c == '"':
		return 400
	case c == ':' || c == ',' || c == '.' || c == '/' || c == '\\' || c == '-' || c == '_':
		return 120
	case c == '{' || c == '}' || c == '[' || c == ']' || c == '=' || c == '(' || c == ')':
		return 40
	case c >= 0x80:
		return 20
	}
	return 10
}

// letterFreq is byteFreq of the lower-case letters, a to z.
var letterFreq = [26]uint16{
	576, 96, 240, 240, 800, 112, 112, 192, 480, 16, 48, 256, 144,
	480, 448, 128, 8, 432, 448, 576, 160, 48, 64, 24, 72, 8,
}

// index returns the index of the first occurrence of the pattern's
// required string in b (in any case when it folds), or -1.
func (p *Pattern) index(b []byte) int {
	if !p.fold {
		return indexRare(b, p.lit, p.rare)
	}
	return indexFold(b, p.lit, p.rare)
}

// indexRare is bytes.Index, faster when needle[rare] is rare in b: it
// looks for that byte with bytes.IndexByte (vector instructions) and
// compares the needle where it is found. When the byte turns out to be
// common (more than one candidate in 16 bytes), bytes.Index does the rest.
func indexRare(b, needle []byte, rare int) int {
	n := len(needle)
	if len(b) < n {
		return -1
	}
	c, last := needle[rare], len(b)-n+rare // the last place c may be
	fails := 0
	for from := rare; from <= last; {
		j := bytes.IndexByte(b[from:last+1], c)
		if j < 0 {
			return -1
		}
		start := from + j - rare
		if bytes.Equal(b[start:start+n], needle) {
			return start
		}
		from += j + 1
		if fails++; fails > 8+from/16 {
			if k := bytes.Index(b[start+1:], needle); k >= 0 {
				return start + 1 + k
			}
			return -1
		}
	}
	return -1
}

// indexFold is bytes.Index for a lower-case needle matched in any ASCII
// case, found by its byte at rare (both cases looked for with
// bytes.IndexByte) and then compared whole.
func indexFold(b, needle []byte, rare int) int {
	c := needle[rare]
	lo, up := c, c
	if c >= 'a' && c <= 'z' {
		up = c - 'a' + 'A'
	}
	n := len(needle)
	// next occurrences of each case of c at or after from, -1: none.
	nextLo, nextUp := -2, -2
	for from := rare; from <= len(b)-(n-rare); {
		if nextLo != -1 && nextLo < from {
			if j := bytes.IndexByte(b[from:], lo); j >= 0 {
				nextLo = from + j
			} else {
				nextLo = -1
			}
		}
		if lo == up {
			nextUp = -1
		} else if nextUp != -1 && nextUp < from {
			if j := bytes.IndexByte(b[from:], up); j >= 0 {
				nextUp = from + j
			} else {
				nextUp = -1
			}
		}
		at := nextLo
		if at < 0 || (nextUp >= 0 && nextUp < at) {
			at = nextUp
		}
		if at < 0 {
			return -1
		}
		start := at - rare
		if start+n <= len(b) && equalFoldASCII(b[start:start+n], needle) {
			return start
		}
		from = at + 1
	}
	return -1
}

// equalFoldASCII reports whether s equals the lower-case lower when ASCII
// letters of s are taken in lower case.
func equalFoldASCII(s, lower []byte) bool {
	for i, c := range s {
		if c >= 'A' && c <= 'Z' {
			c |= 0x20
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// MayHold reports whether the JSON text raw may hold, once its strings
// are decoded, a match of p: false only when it cannot. It looks for the
// required string as it is; since a writer may escape any character as
// \uXXXX (and '/' as \/), text with such escapes may hold it too.
func (p *Pattern) MayHold(raw []byte) bool {
	if p.lit == nil || p.index(raw) >= 0 {
		return true
	}
	return bytes.Contains(raw, escapeU) || (p.slash && bytes.Contains(raw, escapeSlash))
}

var escapeU, escapeSlash = []byte(`\u`), []byte(`\/`)

// Lines calls fn with each line of text that holds a match of p, its
// index among the lines of text (from 0) and the matches in it (byte
// ranges of the line), in order, until fn returns false. A line ends at
// '\n'; a '\r' before it is part of the line.
func (p *Pattern) Lines(text []byte, fn func(line []byte, n int, spans [][]int) bool) bool {
	m := p.matcher()
	defer m.close()
	return m.lines(text, true, fn)
}

// matcher matches a pattern on one goroutine: it holds a dfa of the
// pattern's pool from its first use until closed.
type matcher struct {
	p *Pattern
	d *dfa
}

func (p *Pattern) matcher() matcher { return matcher{p: p} }

// close gives the dfa back to the pattern's pool.
func (m *matcher) close() {
	if m.d != nil {
		m.p.dfa.put(m.d)
		m.d = nil
	}
}

func (m *matcher) dfa() *dfa {
	if m.d == nil {
		m.d = m.p.dfa.get()
	}
	return m.d
}

// lines is Lines; without spans, fn is given nil spans, and a line is
// only known to match.
func (m *matcher) lines(text []byte, spans bool, fn func(line []byte, n int, spans [][]int) bool) bool {
	p := m.p
	lineNo, counted := 0, 0 // the line number of text[counted:]
	number := func(start int) int {
		lineNo += bytes.Count(text[counted:start], nl)
		counted = start
		return lineNo
	}
	// match returns the matches in a line that may hold one (nil: none),
	// or, without spans, noSpans when it holds one.
	match := func(line []byte, known bool) [][]int {
		switch {
		case spans:
			return p.re.FindAllIndex(line, -1)
		case known || p.re.Match(line):
			return noSpans
		}
		return nil
	}
	if p.dfa != nil && !p.dfaLit {
		d := m.dfa()
		for pos := 0; pos < len(text); {
			start, end := d.line(text, pos)
			if start < 0 {
				return true
			}
			line := text[start:end]
			if sp := match(line, true); sp != nil && !fn(line, number(start), spanList(sp)) {
				return false
			}
			pos = end + 1
		}
		return true
	}
	if p.lit == nil {
		for pos := 0; pos < len(text); {
			loc := p.re.FindIndex(text[pos:])
			if loc == nil {
				return true
			}
			at := pos + loc[0]
			if at == len(text) && text[at-1] == '\n' {
				return true // after the last line break: no line
			}
			start, end := lineBounds(text, at)
			line := text[start:end]
			if sp := match(line, true); !fn(line, number(start), spanList(sp)) {
				return false
			}
			pos = end + 1
		}
		return true
	}
	for pos := 0; pos < len(text); {
		i := p.index(text[pos:])
		if i < 0 {
			return true
		}
		start, end := lineBounds(text, pos+i)
		line := text[start:end]
		pos = end + 1
		known := false
		if p.dfaLit {
			if s, _ := m.dfa().line(line, 0); s < 0 {
				continue
			}
			known = true
		}
		if sp := match(line, known); sp != nil && !fn(line, number(start), spanList(sp)) {
			return false
		}
	}
	return true
}

// noSpans stands for the matches of a line that holds one, when they are
// not wanted; fn is given nil.
var noSpans = [][]int{}

func spanList(sp [][]int) [][]int {
	if len(sp) == 0 {
		return nil
	}
	return sp
}

var nl = []byte{'\n'}

// lineBounds returns the start and end (the index of its '\n', or
// len(text)) of the line of text that holds index i.
func lineBounds(text []byte, i int) (start, end int) {
	start = bytes.LastIndexByte(text[:i], '\n') + 1
	end = bytes.IndexByte(text[i:], '\n')
	if end < 0 {
		return start, len(text)
	}
	return start, i + end
}

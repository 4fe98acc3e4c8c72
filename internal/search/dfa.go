package search

import (
	"bytes"
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"sync"
	"unicode/utf8"
)

// A dfa finds the lines of a text that hold a match of a regular
// expression, a byte at a time from a table: the states of a deterministic
// automaton built lazily from the expression's program, as RE2 and
// ripgrep do, each state the set of program instructions an unanchored
// search may be at. Go's regexp simulates those sets instruction by
// instruction for every byte; a table lookup per byte is many times
// faster where the expression has no long literal to look for first. It
// only answers which lines match; where in a line is regexp's to say.
//
// Lines are matched one at a time as Pattern.Lines matches them: a line
// is a text of its own, so `^` and `\A` match at its start, `$` and `\z`
// at its end. A dfa is not safe for concurrent use: a Pattern keeps a
// pool of them over one program (dfaProg).
type dfa struct {
	*dfaProg
	// states[i] is state i; state 0 is not one (a zero in trans is a
	// transition not yet computed) and state 1 is the start of a line.
	states []dstate
	// trans[s<<8|b] is the state after state s reads byte b (its row:
	// its number << 8), or one of the marks below.
	trans []int32
	index map[string]int32
	// runes holds the transitions on runes of several bytes, by state<<32
	// | rune.
	runes map[uint64]int32
	// Scratch of the closure.
	stack []uint32
	seen  []uint32 // seen[pc] == gen: pc is in the closure
	gen   uint32
	insts []uint32 // the consuming instructions of the closure
	next  []uint32
	key   []byte
	// resets counts the table's resets: a transition computed across one
	// is not kept, its state being gone.
	resets int
}

// Marks in dfa.trans, besides the states (> 0).
const (
	unknown  = 0  // not computed yet
	matched  = -1 // the line holds a match before this byte
	lineEnd  = -2 // '\n': the end of the line
	multiRun = -3 // the first byte of a rune of several bytes (or not UTF-8)
)

// dstate is a state: the roots of its instructions (what a step leads to,
// before the empty-width assertions, which depend on the byte that comes
// next, are followed) and what it knows of the byte before.
type dstate struct {
	roots []uint32
	start bool // at the start of the line
	word  bool // after a word character (ASCII letter, digit, '_')
	// end: whether the line holds a match when it ends here (0 not
	// known yet, 1 no, 2 yes).
	end uint8
}

const (
	// maxDFAStates bounds a dfa's table (1 KiB a state): past it the
	// table is cleared and built again from what is met next.
	maxDFAStates = 4096
	// maxDFAInsts is the largest program a dfa is built for; a larger one
	// (a counted repetition of a long class, say) is left to regexp.
	maxDFAInsts = 4096
)

// dfaProg is what the dfas of a pattern share: the program, and a pool of
// dfas over it.
type dfaProg struct {
	prog *syntax.Prog
	// word: the program asserts word boundaries, so states keep whether
	// the byte before was a word character.
	word bool
	pool sync.Pool
}

// newDFAProg returns the dfa program of the regular expression expr as
// regexp compiles it (Perl syntax), or nil when expr is too large for one.
func newDFAProg(expr string) *dfaProg {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil || len(prog.Inst) > maxDFAInsts {
		return nil
	}
	p := &dfaProg{prog: prog}
	for _, in := range prog.Inst {
		if in.Op == syntax.InstEmptyWidth && syntax.EmptyOp(in.Arg)&(syntax.EmptyWordBoundary|syntax.EmptyNoWordBoundary) != 0 {
			p.word = true
		}
	}
	return p
}

// get returns a dfa of p's program, from the pool when one is idle.
func (p *dfaProg) get() *dfa {
	if d, ok := p.pool.Get().(*dfa); ok {
		return d
	}
	d := &dfa{dfaProg: p, seen: make([]uint32, len(p.prog.Inst))}
	d.reset()
	return d
}

func (p *dfaProg) put(d *dfa) { p.pool.Put(d) }

// reset empties the table: only the start state is left.
func (d *dfa) reset() {
	d.resets++
	d.states = append(d.states[:0], dstate{}) // state 0: none
	d.trans = d.trans[:0]
	d.trans = append(d.trans, make([]int32, 256)...)
	if d.index == nil {
		d.index = map[string]int32{}
		d.runes = map[uint64]int32{}
	}
	clear(d.index)
	clear(d.runes)
	d.intern([]uint32{uint32(d.prog.Start)}, true, false)
}

// intern returns the state of roots (sorted, without repeats) and flags,
// adding it when new.
func (d *dfa) intern(roots []uint32, start, word bool) int32 {
	key := d.key[:0]
	var flags byte
	if start {
		flags |= 1
	}
	if word {
		flags |= 2
	}
	key = append(key, flags)
	for _, pc := range roots {
		key = binary.LittleEndian.AppendUint32(key, pc)
	}
	d.key = key
	if s, ok := d.index[string(key)]; ok {
		return s
	}
	s := int32(len(d.states))
	d.states = append(d.states, dstate{roots: slices.Clone(roots), start: start, word: word})
	row := make([]int32, 256)
	row['\n'] = lineEnd
	for b := utf8.RuneSelf; b < 256; b++ {
		row[b] = multiRun
	}
	d.trans = append(d.trans, row...)
	d.index[string(key)] = s
	return s
}

// isWordRune reports whether r is a word character of `\b`: ASCII only,
// as in regexp/syntax.
func isWordRune(r rune) bool {
	return r < utf8.RuneSelf && syntax.IsWordChar(r)
}

// closure follows the instructions from roots that consume nothing, with
// the empty-width assertions op allows, into d.insts (those that consume
// a rune); it reports whether it reached a match.
func (d *dfa) closure(roots []uint32, op syntax.EmptyOp) bool {
	d.gen++
	if d.gen == 0 { // wrapped: the stamps are stale
		clear(d.seen)
		d.gen = 1
	}
	d.insts = d.insts[:0]
	stack := append(d.stack[:0], roots...)
	found := false
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d.seen[pc] == d.gen {
			continue
		}
		d.seen[pc] = d.gen
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Arg, in.Out)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^op == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstMatch:
			found = true
		case syntax.InstFail:
		default: // InstRune, InstRune1, InstRuneAny, InstRuneAnyNotNL
			d.insts = append(d.insts, pc)
		}
	}
	d.stack = stack
	return found
}

// context is the empty-width assertions that hold between the byte a
// state s was reached by and the rune r after it (-1: the end of the
// line).
func (d *dfa) context(s *dstate, r rune) syntax.EmptyOp {
	var op syntax.EmptyOp
	if s.start {
		op |= syntax.EmptyBeginLine | syntax.EmptyBeginText
	}
	if r < 0 {
		op |= syntax.EmptyEndLine | syntax.EmptyEndText
	}
	if s.word != isWordRune(r) {
		op |= syntax.EmptyWordBoundary
	} else {
		op |= syntax.EmptyNoWordBoundary
	}
	return op
}

// step returns the state (its row in trans) after state s reads rune r
// (not '\n'), or matched when the line holds a match ending before r.
func (d *dfa) step(s int32, r rune) int32 {
	st := &d.states[s]
	if d.closure(st.roots, d.context(st, r)) {
		return matched
	}
	next := append(d.next[:0], uint32(d.prog.Start))
	for _, pc := range d.insts {
		if in := &d.prog.Inst[pc]; in.MatchRune(r) {
			next = append(next, in.Out)
		}
	}
	slices.Sort(next)
	next = slices.Compact(next)
	d.next = next
	word := d.word && isWordRune(r)
	if len(d.states) >= maxDFAStates {
		d.reset()
	}
	return d.intern(next, false, word) << 8
}

// endMatch reports whether the line holds a match when it ends in state s.
func (d *dfa) endMatch(s int32) bool {
	st := &d.states[s]
	if st.end == 0 {
		st.end = 1
		if d.closure(st.roots, d.context(st, -1)) {
			st.end = 2
		}
	}
	return st.end == 2
}

// line returns the bounds of the first line of text at or after from (a
// line start) that holds a match: start and end, the index of its '\n' or
// len(text); start is -1 when none does. As in Pattern.Lines, the end of
// text after its last '\n' is no line, nor is an empty text.
func (d *dfa) line(text []byte, from int) (start, end int) {
	// s is the current state's row in trans (its number << 8), as are
	// the states trans holds.
	const startRow = 1 << 8
	s, start := int32(startRow), from
	trans := d.trans
	for i := from; i < len(text); i++ {
		t := trans[int(s)+int(text[i])]
		if t > 0 {
			s = t
			continue
		}
		switch t {
		case lineEnd:
			if d.endMatch(s >> 8) {
				return start, i
			}
			s, start = startRow, i+1
			continue
		case multiRun:
			r, n := utf8.DecodeRune(text[i:])
			key := uint64(s)<<32 | uint64(uint32(r))
			var ok bool
			if t, ok = d.runes[key]; !ok {
				resets := d.resets
				if t = d.step(s>>8, r); d.resets == resets {
					d.runes[key] = t
				}
			}
			i += n - 1
		case unknown:
			resets := d.resets
			if t = d.step(s>>8, rune(text[i])); d.resets == resets {
				d.trans[int(s)+int(text[i])] = t
			}
		}
		if t == matched {
			if j := bytes.IndexByte(text[i:], '\n'); j >= 0 {
				return start, i + j
			}
			return start, len(text)
		}
		s, trans = t, d.trans
	}
	if start < len(text) && d.endMatch(s>>8) {
		return start, len(text)
	}
	return -1, -1
}

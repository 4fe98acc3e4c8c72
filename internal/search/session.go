package search

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/dshctl/dshctl/internal/rawjson"
	"github.com/dshctl/dshctl/internal/seam"
)

// In says what of an event a pattern is matched against.
type In int

const (
	// InText matches the text of the event: each string value of its data
	// (at any depth, decoded: `\n` is a line break, `\"` a quote), line
	// by line. Keys, numbers and the envelope are not text.
	InText In = iota
	// InJSON matches the event's canonical JSON line, as `dshctl cat`
	// prints it.
	InJSON
)

// Options say what Session looks for.
type Options struct {
	Pattern *Pattern
	In      In
	// Types are path.Match patterns of event types ("tool/*"); an event
	// is searched when any matches. Empty: every type.
	Types []string
	// Since and Until, when set, bound the events searched by their time
	// (epoch ms, both inclusive).
	Since, Until       int64
	HasSince, HasUntil bool
	// Max stops a session's search after this many matching lines (0: no
	// limit).
	Max int
	// NoSpans leaves Match.Spans nil: only which lines match is wanted
	// (grep -c, -l, -q), which is found faster.
	NoSpans bool
}

// Match is one line that matches: a line of a string of an event's data,
// or (InJSON) its JSON line.
type Match struct {
	Seq int64
	// Turn is the turn the event belongs to, from its turn/start through
	// its turn/end; HasTurn is false for an event outside every turn.
	Turn    int64
	HasTurn bool
	Type    string
	Time    int64
	// Field is the jq path of the string in the event (".data.content[0].text"),
	// "" for InJSON.
	Field string
	// Line numbers the line in its string from 1 (0 for InJSON).
	Line int
	// Text is the line, without its line break; Spans are the byte ranges
	// of the matches in it ([start, end) pairs). Both are valid only until
	// the function given the match returns.
	Text  []byte
	Spans [][]int
}

// errStop ends a search from inside the scan.
var errStop = errors.New("search stopped")

// Session calls fn with every line of the events of h that matches o, in
// seq order, and returns their number. It reads h's committed events only
// (a torn or uncommitted tail is never searched), streamed, holding one
// record at a time; events whose stored text cannot hold a match are not
// walked. fn may return ErrStop to end the search without an error.
func Session(ctx context.Context, h seam.Handle, o *Options, fn func(*Match) error) (int, error) {
	s := sessionSearch{o: o, fn: fn, types: newTypeSet(o.Types), m: o.Pattern.matcher()}
	defer s.m.close()
	for ev, err := range h.Scan(ctx, seam.ScanOptions{Transient: true}) {
		if err != nil {
			return s.n, err
		}
		if err := s.event(&ev); err != nil {
			if errors.Is(err, errStop) || errors.Is(err, ErrStop) {
				return s.n, nil
			}
			return s.n, err
		}
	}
	return s.n, nil
}

// ErrStop, returned by the function Session calls, ends the search.
var ErrStop = errors.New("stop the search")

type sessionSearch struct {
	o     *Options
	fn    func(*Match) error
	types *typeSet
	m     matcher
	n     int
	turn  int64
	in    bool // in a turn
	match Match
	texts texts
	line  []byte // InJSON: the event's canonical line
	err   error
}

func (s *sessionSearch) event(e *seam.Event) error {
	switch e.Type {
	case "turn/start":
		s.turn, s.in = 0, false
		if t, ok := rawjson.LookupInt(e.Data, "turn"); ok {
			s.turn, s.in = t, true
		}
	}
	inTurn, turn := s.in, s.turn
	if !inTurn {
		turn = 0
	}
	if e.Type == "turn/end" {
		s.in = false
	}
	o := s.o
	if (o.HasSince && e.Time < o.Since) || (o.HasUntil && e.Time > o.Until) || !s.types.match(e.Type) {
		return nil
	}
	s.match = Match{Seq: e.Seq, Turn: turn, HasTurn: inTurn, Type: e.Type, Time: e.Time}
	p := o.Pattern
	if o.In == InJSON {
		s.line = e.AppendJSON(s.line[:0])
		s.m.lines(s.line, !o.NoSpans, s.emit)
		return s.err
	}
	if !p.MayHold(e.Data) {
		return nil
	}
	s.texts.walk(e.Data, func(text []byte) bool {
		s.match.Field = ""
		return s.m.lines(text, !o.NoSpans, s.emit)
	})
	return s.err
}

// emit gives fn a matching line of the current text.
func (s *sessionSearch) emit(line []byte, n int, spans [][]int) bool {
	m := &s.match
	if s.o.In == InText {
		if m.Field == "" {
			m.Field = s.texts.field(".data")
		}
		m.Line = n + 1
	}
	m.Text, m.Spans = line, spans
	s.n++
	if s.err = s.fn(m); s.err != nil {
		return false
	}
	if s.o.Max > 0 && s.n >= s.o.Max {
		s.err = errStop
		return false
	}
	return true
}

// typeSet matches event types against path.Match patterns, remembering
// the answer for each type met (a log has a few dozen).
type typeSet struct {
	globs []string
	seen  map[string]bool
}

func newTypeSet(globs []string) *typeSet {
	if len(globs) == 0 {
		return nil
	}
	return &typeSet{globs: globs, seen: map[string]bool{}}
}

func (t *typeSet) match(typ string) bool {
	if t == nil {
		return true
	}
	if m, ok := t.seen[typ]; ok {
		return m
	}
	m := false
	for _, g := range t.globs {
		if ok, _ := path.Match(g, typ); ok {
			m = true
			break
		}
	}
	if len(t.seen) < 1024 {
		t.seen[strings.Clone(typ)] = m
	}
	return m
}

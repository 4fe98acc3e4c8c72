package inspect

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/timespec"
)

// FilterOptions are `cat`'s event filters; the zero value matches every
// event.
type FilterOptions struct {
	// From is the first seq to match.
	From int64
	// To is the last seq to match, when HasTo is set.
	To    int64
	HasTo bool
	// Types are path.Match patterns of event types ("tool/*"); an event
	// matches when any pattern does. Empty means every type.
	Types []string
	// Turn, when HasTurn is set, matches the events from turn/start
	// {turn:Turn} through its turn/end, inclusive.
	Turn    int64
	HasTurn bool
	// Time matches the events whose time is in its span (all when unset).
	// Event times need not grow with seq, so it never ends a scan early.
	Time timespec.Range
}

// TypePatterns are the event types of every format version, and the globs
// of their families ("tool/*"), sorted: what a Types filter is given.
func TypePatterns() []string {
	var out []string
	for v := 0; v <= seam.MaxVersion; v++ {
		for _, t := range seam.Vocabulary(v) {
			out = append(out, t)
			if family, _, ok := strings.Cut(t, "/"); ok {
				out = append(out, family+"/*")
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// maxTypeCache bounds the per-type match cache of a Filter; a log has a few
// dozen types, so this is only a guard against hostile input.
const maxTypeCache = 1024

// Filter matches events against FilterOptions. It must be fed every event of
// the scanned range in seq order (turn tracking depends on it), and tells the
// caller when no later event can match.
type Filter struct {
	o      FilterOptions
	exact  map[string]bool
	globs  []string
	cache  map[string]bool
	inTurn bool
	done   bool
	// turns are the turns met, with a turn filter.
	turns TurnRange
}

// TurnRange counts the turn/start events met and their first and last
// turn numbers.
type TurnRange struct {
	Count, First, Last int64
	// Found says the wanted turn was met.
	Found bool
}

// FilterError rejects a field of FilterOptions.
type FilterError struct {
	// Field is the field at fault: "From" (negative, or after To) or
	// "Types" (Pattern is not a valid pattern).
	Field   string
	Pattern string
	Err     error
}

func (e *FilterError) Error() string {
	if e.Field == "Types" {
		return fmt.Sprintf("type pattern %q: %v", e.Pattern, e.Err)
	}
	return fmt.Sprintf("filter %s: %v", e.Field, e.Err)
}

func (e *FilterError) Unwrap() error { return e.Err }

// NewFilter checks o (patterns must be valid, From must not exceed To) and
// returns its Filter; a bad field is a *FilterError.
func NewFilter(o FilterOptions) (*Filter, error) {
	if o.From < 0 {
		return nil, &FilterError{Field: "From", Err: fmt.Errorf("seq %d: a seq is never negative", o.From)}
	}
	if o.HasTo && o.From > o.To {
		return nil, &FilterError{Field: "From", Err: fmt.Errorf("seq %d is after the last seq %d", o.From, o.To)}
	}
	f := &Filter{o: o}
	if len(o.Types) > 0 {
		f.exact, f.cache = map[string]bool{}, map[string]bool{}
	}
	for _, p := range o.Types {
		if _, err := path.Match(p, ""); err != nil {
			return nil, &FilterError{Field: "Types", Pattern: p, Err: err}
		}
		if strings.ContainsAny(p, `*?[\`) {
			f.globs = append(f.globs, p)
		} else {
			f.exact[p] = true
		}
	}
	return f, nil
}

// ScanFrom is the seq a caller's scan may start at: From, or 0 with a turn
// filter, whose turn/start may precede From.
func (f *Filter) ScanFrom() int64 {
	if f.o.HasTurn {
		return 0
	}
	return f.o.From
}

// Match reports whether e passes every filter. After it, Done reports
// whether the scan can stop.
func (f *Filter) Match(e *seam.Event) bool {
	if f.o.HasTo && e.Seq >= f.o.To {
		f.done = true
		if e.Seq > f.o.To {
			return false
		}
	}
	in := true
	if f.o.HasTurn {
		in = f.turn(e)
	}
	return in && e.Seq >= f.o.From && f.o.Time.Contains(e.Time) && f.typeMatch(e.Type)
}

// turn tracks turn f.o.Turn and reports whether e belongs to it.
func (f *Filter) turn(e *seam.Event) bool {
	switch e.Type {
	case typeTurnStart:
		var d turnStep
		ok := json.Unmarshal(e.Data, &d) == nil
		if ok {
			t := &f.turns
			if t.Count == 0 {
				t.First = d.Turn
			}
			t.Count++
			t.Last = d.Turn
		}
		f.inTurn = ok && d.Turn == f.o.Turn
		f.turns.Found = f.turns.Found || f.inTurn
		return f.inTurn
	case typeTurnEnd:
		if !f.inTurn {
			return false
		}
		// Turn numbers only grow, so nothing after this turn/end matches.
		f.inTurn, f.done = false, true
		return true
	}
	return f.inTurn
}

func (f *Filter) typeMatch(typ string) bool {
	if f.exact == nil || f.exact[typ] {
		return true
	}
	if len(f.globs) == 0 {
		return false
	}
	if m, ok := f.cache[typ]; ok {
		return m
	}
	m := false
	for _, p := range f.globs {
		if ok, _ := path.Match(p, typ); ok {
			m = true
			break
		}
	}
	if len(f.cache) < maxTypeCache {
		f.cache[typ] = m
	}
	return m
}

// Done reports that no event after the last one matched can pass: the scan
// is past To, or past the end of the wanted turn.
func (f *Filter) Done() bool { return f.done }

// Turns returns the turns met so far, with a turn filter.
func (f *Filter) Turns() TurnRange { return f.turns }

// TurnError says the turn a filter wants is not in the log; Turns are the
// turns it has.
type TurnError struct {
	Turn  int64
	Turns TurnRange
}

func (e *TurnError) Error() string {
	switch t := e.Turns; t.Count {
	case 0:
		return fmt.Sprintf("turn %d not found: the log has no turns", e.Turn)
	case 1:
		return fmt.Sprintf("turn %d not found: the log has 1 turn, turn %d", e.Turn, t.First)
	default:
		return fmt.Sprintf("turn %d not found: the log has %d turns, %d to %d", e.Turn, t.Count, t.First, t.Last)
	}
}

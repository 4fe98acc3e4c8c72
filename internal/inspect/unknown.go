package inspect

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
)

// unknownTypes counts the events of types a log's format version does not
// know and that are not ignorable (a plugin's): dsh refuses a log holding
// any. Events that several scans of one log give are counted once.
type unknownTypes struct {
	version int
	types   map[string]int64
	first   int64
	// scanned are the seq ranges of the scans watched so far.
	scanned [][2]int64
}

func newUnknownTypes(version int) *unknownTypes {
	return &unknownTypes{version: version, types: map[string]int64{}, first: -1}
}

// observe counts e if it is of an unknown type and was not counted yet.
func (u *unknownTypes) observe(e *seam.Event) {
	if e.Ignorable || seam.KnownType(u.version, e.Type) {
		return
	}
	for _, r := range u.scanned {
		if e.Seq >= r[0] && e.Seq <= r[1] {
			return
		}
	}
	u.types[e.Type]++
	if u.first < 0 || e.Seq < u.first {
		u.first = e.Seq
	}
}

// watch returns h with scans that observe every event they give.
func (u *unknownTypes) watch(h seam.Handle) seam.Handle { return watched{h, u} }

type watched struct {
	seam.Handle
	u *unknownTypes
}

func (w watched) Scan(ctx context.Context, opts seam.ScanOptions) iter.Seq2[seam.Event, error] {
	return func(yield func(seam.Event, error) bool) {
		lo, hi := int64(-1), int64(-1)
		defer func() {
			if lo >= 0 {
				w.u.scanned = append(w.u.scanned, [2]int64{lo, hi})
			}
		}()
		for e, err := range w.Handle.Scan(ctx, opts) {
			if err == nil {
				w.u.observe(&e)
				if lo < 0 || e.Seq < lo {
					lo = e.Seq
				}
				hi = max(hi, e.Seq)
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

// err is the refusal dsh would give the log snap describes, nil when no
// unknown type was seen. partial says the log was not read whole.
func (u *unknownTypes) err(snap seam.Snapshot, partial bool) error {
	if len(u.types) == 0 {
		return nil
	}
	return &UnknownTypesError{ID: snap.Header.ID, Version: u.version, Types: u.types, First: u.first,
		Path: snap.Location.Path, Partial: partial}
}

// UnknownTypesError says a log holds events of types its format version
// does not know and that are not ignorable: dsh refuses such a log unless a
// plugin registers the types. It matches seam.ErrUnsupportedFormat.
type UnknownTypesError struct {
	ID      string
	Version int
	// Types counts the events of each unknown type.
	Types map[string]int64
	// First is the seq of the first such event.
	First int64
	// Path is the log (its Location.Path), "" when unknown.
	Path string
	// Partial says only part of the log was read (its head and tail): the
	// counts are of that part, and more such events may lie between.
	Partial bool
}

func (e *UnknownTypesError) Error() string {
	types := slices.Sorted(maps.Keys(e.Types))
	return fmt.Sprintf("session %q: event types %s unknown to format v%d and not ignorable, first at seq %d",
		e.ID, strings.Join(types, ", "), e.Version, e.First)
}

func (e *UnknownTypesError) Is(target error) bool { return target == seam.ErrUnsupportedFormat }

// Counted lists the unknown types sorted and quoted, each followed by its
// count unless Partial (a count of part of the log would mislead):
// `"plugin/x" (3)`.
func (e *UnknownTypesError) Counted() []string {
	types := slices.Sorted(maps.Keys(e.Types))
	for i, t := range types {
		types[i] = strconv.Quote(t)
		if !e.Partial {
			types[i] += fmt.Sprintf(" (%d)", e.Types[t])
		}
	}
	return types
}

// Refusal is the error dsh gives for the log, worded for people: a
// *seam.Error of kind ErrUnsupportedFormat for operation op, at the first
// such event, naming the types.
func (e *UnknownTypesError) Refusal(op string) error {
	pos := seam.NoPos
	pos.Seq, pos.Path = e.First, e.Path
	types := e.Counted()
	what := "event type " + types[0] + " is"
	if len(types) > 1 {
		what = "event types " + strings.Join(types, ", ") + " are"
	}
	return &seam.Error{Kind: seam.ErrUnsupportedFormat, Op: op, ID: e.ID, Pos: pos, Err: fmt.Errorf(
		"dsh refuses this log: %s unknown to format v%d and not ignorable (a plugin's, or a newer dsh's)",
		what, e.Version)}
}

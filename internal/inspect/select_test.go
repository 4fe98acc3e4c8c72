package inspect

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/timespec"
)

func TestSelect(t *testing.T) {
	session := func(id, cwd, state string, updated int64) Session {
		s := Session{Snapshot: seam.Snapshot{Header: seam.Header{ID: id, Cwd: cwd}}, HeaderKnown: true, MetaKnown: true, State: state}
		s.Meta.UpdatedAt, s.Meta.LastPromptKnown = updated, true
		return s
	}
	rows := []Session{
		session("a", "/p", StateDone, 1),
		session("b", "/p/", StateBlank, 2),
		session("c", "/q", StateError, 3),
		session("d", "/p", StateOpen, 4),
	}
	ids := func(s Selected) (out string) {
		for _, r := range s.Rows {
			out += r.ID()
		}
		return out
	}
	for _, c := range []struct {
		s                  Selection
		want               string
		hidden, unreadable int
	}{
		{Selection{}, "dca", 1, 1},
		{Selection{All: true}, "dcba", 0, 1},
		{Selection{Project: "/p"}, "da", 1, 0},
		{Selection{All: true, Project: "/p", Limit: 2}, "db", 0, 0},
		{Selection{Sort: "created"}, "acd", 1, 1}, // created: all 0, then by id
		// --state: only those states; blank among them shows blank sessions.
		{Selection{States: []string{StateOpen, StateError}}, "dc", 0, 1},
		{Selection{States: []string{StateBlank}}, "b", 0, 1},
		{Selection{States: []string{StateDone}, Project: "/p"}, "a", 0, 0},
		// --since/--until: created (0 for all) at or before Until, updated
		// at or after Since.
		{Selection{Active: timespec.Range{Since: 3, HasSince: true}}, "dc", 0, 1},
		{Selection{Active: timespec.Range{Since: 2, HasSince: true, Until: 3, HasUntil: true}, All: true}, "dcb", 0, 1},
		{Selection{Active: timespec.Range{Until: -1, HasUntil: true}}, "", 0, 1},
	} {
		got := Select(rows, c.s)
		if ids(got) != c.want || got.Hidden != c.hidden || got.Unreadable != c.unreadable {
			t.Errorf("Select(%+v) = %s, %d hidden, %d unreadable; want %s, %d, %d", c.s, ids(got), got.Hidden, got.Unreadable, c.want, c.hidden, c.unreadable)
		}
	}
}

// selectAll is Select as it was before rows were picked one at a time:
// every row kept, then sorted and cut.
func selectAll(rows []Session, s Selection) Selected {
	var out Selected
	for i := range rows {
		r := &rows[i]
		if s.Project != "" && (!r.HeaderKnown || filepath.Clean(r.Snapshot.Header.Cwd) != s.Project) {
			continue
		}
		if r.State == StateError {
			out.Unreadable++
		}
		if r.State == StateBlank && !s.All {
			out.Hidden++
			continue
		}
		out.Rows = append(out.Rows, r)
	}
	SortRows(out.Rows, s.Sort)
	if s.Limit > 0 && len(out.Rows) > s.Limit {
		out.Rows = out.Rows[:s.Limit]
	}
	return out
}

// randomRows are n rows whose keys, ids, locations, projects and states
// often tie, so that every step of the order is exercised.
func randomRows(rnd *rand.Rand, n int) []Session {
	states := []string{StateBlank, StateOpen, StateDone, StateError}
	cwds := []string{"/p", "/p/", "/q", ""}
	rows := make([]Session, n)
	for i := range rows {
		r := &rows[i]
		r.Snapshot.Header = seam.Header{ID: fmt.Sprintf("s%d", rnd.IntN(n/2+1)), Cwd: cwds[rnd.IntN(len(cwds))], CreatedAt: rnd.Int64N(5) - 1}
		r.Snapshot.Location.Path = fmt.Sprintf("/store/%d", i) // (id, path) names one row
		r.Snapshot.SizeBytes, r.Snapshot.EventCount = rnd.Int64N(5), rnd.Int64N(5)
		r.HeaderKnown, r.MetaKnown = rnd.IntN(5) > 0, rnd.IntN(3) > 0
		r.Meta.UpdatedAt = rnd.Int64N(6)
		r.State = states[rnd.IntN(len(states))]
	}
	return rows
}

// TestPickerAgreesWithSelect: rows picked one at a time, keeping at most
// Limit of them, give what sorting them all and cutting gave, in the same
// order and with the same counts, for every flag combination.
func TestPickerAgreesWithSelect(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 15))
	name := func(rs []*Session) (out []string) {
		for _, r := range rs {
			out = append(out, r.ID()+"@"+r.Snapshot.Location.Path)
		}
		return out
	}
	for range 3000 {
		rows := randomRows(rnd, 1+rnd.IntN(40))
		s := Selection{
			All:     rnd.IntN(2) == 0,
			Project: []string{"", "/p", "/q"}[rnd.IntN(3)],
			Sort:    append(slices.Clone(SortKeys), "other")[rnd.IntN(len(SortKeys)+1)],
			Limit:   rnd.IntN(len(rows) + 3),
		}
		want := selectAll(rows, s)
		p := newPicker(s)
		for _, r := range rows {
			p.add(r)
			if s.Limit > 0 && len(p.last.rows) > s.Limit {
				t.Fatalf("picker holds %d rows, limit %d", len(p.last.rows), s.Limit)
			}
		}
		got := p.result()
		if !slices.Equal(name(got.Rows), name(want.Rows)) || got.Hidden != want.Hidden || got.Unreadable != want.Unreadable {
			t.Fatalf("%+v: picked %v (%d hidden, %d unreadable), want %v (%d, %d)", s,
				name(got.Rows), got.Hidden, got.Unreadable, name(want.Rows), want.Hidden, want.Unreadable)
		}
		if sel := Select(rows, s); !slices.Equal(name(sel.Rows), name(want.Rows)) {
			t.Fatalf("%+v: Select = %v, want %v", s, name(sel.Rows), name(want.Rows))
		}
	}
}

func TestActiveIn(t *testing.T) {
	span := timespec.Range{Since: 100, HasSince: true, Until: 200, HasUntil: true}
	row := func(created, updated int64, promptKnown, headerKnown bool) *Session {
		s := &Session{Snapshot: seam.Snapshot{Header: seam.Header{CreatedAt: created}}, HeaderKnown: headerKnown, MetaKnown: true}
		s.Meta.UpdatedAt, s.Meta.LastPromptKnown = updated, promptKnown
		return s
	}
	for _, tc := range []struct {
		s    *Session
		want bool
	}{
		{row(50, 90, true, true), false},   // over before the span
		{row(50, 100, true, true), true},   // updated at its start
		{row(150, 150, true, true), true},  // inside
		{row(200, 300, true, true), true},  // created at its end
		{row(201, 300, true, true), false}, // created after it
		{row(50, 50, true, true), false},
		// The last prompt was not found within the scan budget: it may be
		// in the span, so the session is kept; so is one without a header.
		{row(50, 50, false, true), true},
		{row(0, 0, false, false), true},
	} {
		if got := tc.s.ActiveIn(span); got != tc.want {
			t.Errorf("ActiveIn(created %d, updated %d, prompt known %v, header known %v) = %v", tc.s.Snapshot.Header.CreatedAt, tc.s.Meta.UpdatedAt, tc.s.Meta.LastPromptKnown, tc.s.HeaderKnown, got)
		}
	}
}

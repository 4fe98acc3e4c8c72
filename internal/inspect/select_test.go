package inspect

import (
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

func TestSelect(t *testing.T) {
	session := func(id, cwd, state string, updated int64) Session {
		s := Session{Snapshot: seam.Snapshot{Header: seam.Header{ID: id, Cwd: cwd}}, HeaderKnown: true, MetaKnown: true, State: state}
		s.Meta.UpdatedAt = updated
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
	} {
		got := Select(rows, c.s)
		if ids(got) != c.want || got.Hidden != c.hidden || got.Unreadable != c.unreadable {
			t.Errorf("Select(%+v) = %s, %d hidden, %d unreadable; want %s, %d, %d", c.s, ids(got), got.Hidden, got.Unreadable, c.want, c.hidden, c.unreadable)
		}
	}
}

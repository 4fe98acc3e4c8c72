package inspect

import (
	"slices"
	"testing"
)

func TestFilter(t *testing.T) {
	events := fixtureEvents(t, "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c")
	seqs := func(from, to int64) []int64 {
		var out []int64
		for s := from; s <= to; s++ {
			out = append(out, s)
		}
		return out
	}
	cases := []struct {
		name string
		o    FilterOptions
		want []int64
		// stop is the seq after which Done holds, -1 for never.
		stop int64
	}{
		{"everything", FilterOptions{}, seqs(0, 112), -1},
		{"from", FilterOptions{From: 110}, seqs(110, 112), -1},
		{"to", FilterOptions{To: 2, HasTo: true}, seqs(0, 2), 2},
		{"to 0", FilterOptions{HasTo: true}, []int64{0}, 0},
		{"from to", FilterOptions{From: 27, To: 28, HasTo: true}, []int64{27, 28}, 28},
		{"type glob", FilterOptions{Types: []string{"tool/*"}}, []int64{27, 28, 66, 67}, -1},
		{"types", FilterOptions{Types: []string{"turn/end", "session/*", "nope"}}, []int64{3, 52, 97, 112}, -1},
		{"turn", FilterOptions{Turn: 2, HasTurn: true}, seqs(53, 97), 97},
		{"turn and type", FilterOptions{Turn: 3, HasTurn: true, Types: []string{"user/message"}}, []int64{100}, 112},
		{"turn from", FilterOptions{Turn: 1, HasTurn: true, From: 50}, []int64{50, 51, 52}, 52},
		{"missing turn", FilterOptions{Turn: 9, HasTurn: true}, nil, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := NewFilter(c.o)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			stop := int64(-1)
			for i := f.ScanFrom(); i < int64(len(events)); i++ {
				if f.Match(&events[i]) {
					got = append(got, events[i].Seq)
				}
				if f.Done() {
					stop = events[i].Seq
					break
				}
			}
			if !slices.Equal(got, c.want) || stop != c.stop {
				t.Errorf("matched %v stop %d, want %v stop %d", got, stop, c.want, c.stop)
			}
		})
	}
}

func TestFilterScanFrom(t *testing.T) {
	f, _ := NewFilter(FilterOptions{From: 40})
	g, _ := NewFilter(FilterOptions{From: 40, Turn: 2, HasTurn: true})
	if f.ScanFrom() != 40 || g.ScanFrom() != 0 {
		t.Errorf("ScanFrom = %d, %d; want 40, 0", f.ScanFrom(), g.ScanFrom())
	}
}

func TestFilterRejects(t *testing.T) {
	for _, o := range []FilterOptions{
		{Types: []string{"tool/["}},
		{From: 5, To: 4, HasTo: true},
		{From: -1},
	} {
		if _, err := NewFilter(o); err == nil {
			t.Errorf("NewFilter(%+v) accepted", o)
		}
	}
}

// TestTypePatterns: every type of every version, and each family's glob,
// once, sorted; each is a pattern a filter accepts.
func TestTypePatterns(t *testing.T) {
	got := TypePatterns()
	if !slices.IsSorted(got) || !slices.Contains(got, "turn/start") || !slices.Contains(got, "tool/*") {
		t.Fatalf("patterns %q", got)
	}
	if len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("a pattern twice: %q", got)
	}
	for _, p := range got {
		if _, err := NewFilter(FilterOptions{Types: []string{p}}); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

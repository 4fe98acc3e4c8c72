package export

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// entry is a List entry of session id with parent, created at ms.
func entry(id, parent string, ms int64) seam.Entry {
	return seam.Entry{Snapshot: seam.Snapshot{Header: seam.Header{ID: id, ParentSession: parent, CreatedAt: ms}}}
}

func TestDescendants(t *testing.T) {
	unreadable := seam.Entry{Err: errors.New("corrupt")}
	unreadable.Snapshot.Location.Path = "/x/session.jsonl"
	for _, c := range []struct {
		name    string
		entries []seam.Entry
		root    string
		want    []string
	}{
		{"none", []seam.Entry{entry("a", "", 1), entry("b", "", 2)}, "a", nil},
		{"children by creation then id", []seam.Entry{
			entry("c3", "p", 30), entry("c1", "p", 10), entry("c2b", "p", 20), entry("c2a", "p", 20), entry("p", "", 0),
		}, "p", []string{"c1", "c2a", "c2b", "c3"}},
		{"depth first", []seam.Entry{
			entry("p", "", 0), entry("a", "p", 1), entry("b", "p", 2), entry("a1", "a", 3), entry("a1x", "a1", 4), entry("b1", "b", 1),
		}, "p", []string{"a", "a1", "a1x", "b", "b1"}},
		{"below a child", []seam.Entry{entry("p", "", 0), entry("a", "p", 1), entry("a1", "a", 3)}, "a", []string{"a1"}},
		{"cycle through the root", []seam.Entry{entry("a", "b", 0), entry("b", "a", 1)}, "a", []string{"b"}},
		{"own parent", []seam.Entry{entry("a", "a", 0), entry("b", "a", 1)}, "a", []string{"b"}},
		{"cycle of three", []seam.Entry{entry("a", "c", 0), entry("b", "a", 1), entry("c", "b", 2)}, "b", []string{"c", "a"}},
		{"missing parent", []seam.Entry{entry("a", "gone", 0), entry("b", "a", 1)}, "gone", []string{"a", "b"}},
		{"root not in store", []seam.Entry{entry("a", "", 0)}, "nosuch", nil},
		{"unreadable entry", []seam.Entry{unreadable, entry("b", "p", 1)}, "p", []string{"b"}},
		{"unreadable child keeps its place", []seam.Entry{
			{Snapshot: seam.Snapshot{Header: seam.Header{ID: "bad", ParentSession: "p", CreatedAt: 5}}, Err: errors.New("corrupt")},
			entry("good", "p", 1),
		}, "p", []string{"good", "bad"}},
		{"one id twice", []seam.Entry{entry("c", "p", 1), entry("c", "q", 1)}, "p", []string{"c"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Descendants(c.entries, c.root); !slices.Equal(got, c.want) {
				t.Errorf("Descendants(%q) = %q, want %q", c.root, got, c.want)
			}
		})
	}
}

// TestDescendantsStable: the order does not depend on List's order, and a
// chain far deeper than any real delegation is walked without recursion.
func TestDescendantsStable(t *testing.T) {
	var entries []seam.Entry
	for i := range 200 {
		parent := "root"
		if i >= 10 {
			parent = "s" + strconv.Itoa(i%10)
		}
		entries = append(entries, entry("s"+strconv.Itoa(i), parent, int64(i%7)))
	}
	want := Descendants(entries, "root")
	if len(want) != 200 {
		t.Fatalf("%d descendants, want 200", len(want))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		if got := Descendants(entries, "root"); !slices.Equal(got, want) {
			t.Fatalf("order depends on List's order:\n%q\n%q", got, want)
		}
	}
	chain := []seam.Entry{}
	for i := range 20000 {
		chain = append(chain, entry(strconv.Itoa(i+1), strconv.Itoa(i), 0))
	}
	if got := Descendants(chain, "0"); len(got) != 20000 || got[19999] != "20000" {
		t.Fatalf("chain: %d descendants", len(got))
	}
}

package verify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// listing is a seam.Service whose List gives entries; parentCycles needs
// nothing else.
type listing struct {
	seam.Service
	entries []seam.Entry
}

func (l listing) List(context.Context) ([]seam.Entry, error) { return l.entries, nil }

// chains is a listing of sessions "id>parent" ("id" alone has none).
func chains(specs ...string) listing {
	var l listing
	for _, s := range specs {
		id, parent, _ := strings.Cut(s, ">")
		l.entries = append(l.entries, seam.Entry{Snapshot: seam.Snapshot{Header: seam.Header{ID: id, ParentSession: parent}}})
	}
	return l
}

func TestParentCycles(t *testing.T) {
	for _, c := range []struct {
		name string
		svc  listing
		ids  []string
		want map[string]string
	}{
		{"no parents", chains("a", "b"), []string{"a", "b"}, map[string]string{}},
		{"a chain that ends", chains("a>b", "b>c", "c"), []string{"a", "b", "c"}, map[string]string{}},
		{"a parent the store lacks ends the chain", chains("a>gone"), []string{"a"}, map[string]string{}},
		{"its own parent", chains("a>a"), []string{"a"}, map[string]string{
			"a": `its parentSession chain loops: "a" → "a"`}},
		{"a loop of three, and one leading into it", chains("x>a", "a>b", "b>c", "c>a"), []string{"x", "a", "b", "c"}, map[string]string{
			"x": `its parentSession chain runs into a loop at "a": "a" → "b" → "c" → "a"`,
			"a": `its parentSession chain loops: "a" → "b" → "c" → "a"`,
			"b": `its parentSession chain loops: "b" → "c" → "a" → "b"`,
			"c": `its parentSession chain loops: "c" → "a" → "b" → "c"`}},
		// Walked from the middle of the loop first, then from outside: the
		// second walk meets fates the first one left.
		{"the loop found from inside first", chains("b>c", "c>b", "y>z", "z>b"), []string{"c", "y", "z"}, map[string]string{
			"c": `its parentSession chain loops: "c" → "b" → "c"`,
			"y": `its parentSession chain runs into a loop at "b": "b" → "c" → "b"`,
			"z": `its parentSession chain runs into a loop at "b": "b" → "c" → "b"`}},
		{"only the ids asked are reported", chains("a>b", "b>a", "q>a"), []string{"q"}, map[string]string{
			"q": `its parentSession chain runs into a loop at "a": "a" → "b" → "a"`}},
		{"an unreadable header is no link", listing{entries: []seam.Entry{
			{Snapshot: seam.Snapshot{Header: seam.Header{ID: "a", ParentSession: "b"}}},
			{Snapshot: seam.Snapshot{Header: seam.Header{ID: "b", ParentSession: "a"}}, Err: seam.ErrCorrupt}}},
			[]string{"a"}, map[string]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parentCycles(t.Context(), c.svc, c.ids)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, c.want) {
				t.Fatalf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestParentCyclesLong: a loop of 100,000 sessions, asked for every id,
// is walked once, and each finding names a few of its members, not all.
func TestParentCyclesLong(t *testing.T) {
	const n = 100_000
	specs, ids := make([]string, n), make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("s%d", i)
		specs[i] = fmt.Sprintf("s%d>s%d", i, (i+1)%n)
	}
	got, err := parentCycles(t.Context(), chains(specs...), ids)
	if err != nil || len(got) != n {
		t.Fatalf("%d sessions reported, %v", len(got), err)
	}
	want := `its parentSession chain loops: "s7" → "s8" → "s9" → "s10" → "s11" → "s12" → "s13" → "s14" → … (100000 sessions in all) → "s7"`
	if got["s7"] != want {
		t.Fatalf("got  %s\nwant %s", got["s7"], want)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := parentCycles(ctx, chains(specs...), ids); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

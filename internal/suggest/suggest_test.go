package suggest

import (
	"slices"
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	ids := []string{
		"session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c",
		"session-7a2b9c4d-1e3f-4a5b-8c6d-0e1f2a3b4c5d",
		"session-c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
	}
	flags := []string{"--all", "--limit", "--project", "--sort", "--strict", "--scan-budget"}
	types := []string{"tool/call", "tool/result", "turn/start", "turn/end", "user/message"}
	for _, tc := range []struct {
		word       string
		candidates []string
		prefixes   bool
		want       []string
	}{
		{"sesion-4f1c", ids, true, ids[:1]},            // a letter left out of a prefix
		{"session-4f1d", ids, true, ids[:1]},           // one wrong
		{"session-7a2b9c4d-1e3f", ids, true, ids[1:2]}, // an exact prefix is not this package's job, but it is near
		{"sesion-4f1c", ids, false, nil},               // whole ids only: too far
		{"nosuch", ids, true, nil},
		{"session-nope", ids, true, nil}, // the shape of an id, 3 edits from each
		{"--limt", flags, false, []string{"--limit"}},
		{"--srot", flags, false, []string{"--sort"}},
		{"--projetc", flags, false, []string{"--project"}},
		{"--x", flags, false, nil},
		{"tool/cal", types, false, []string{"tool/call"}},
		{"turn/stop", types, false, nil},
		{"turn/ned", types, false, []string{"turn/end"}},
		{"", types, false, nil},
		{strings.Repeat("a", 300), types, false, nil},
	} {
		if got := Nearest(tc.word, tc.candidates, tc.prefixes); !slices.Equal(got, tc.want) {
			t.Errorf("Nearest(%q, prefixes %v) = %q, want %q", tc.word, tc.prefixes, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2},
		{"ü", "u", 1}, {"abc", "abc", 0}, {"--projetc", "--project", 1}, {"ca", "abc", 3},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

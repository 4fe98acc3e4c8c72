package sessionview

import (
	"testing"

	"github.com/dshctl/dshctl/internal/termui"
)

func TestAppendCut(t *testing.T) {
	esc, reset := string(termui.BoldRed), string(termui.AppendReset(nil))
	for _, tc := range []struct {
		text   string
		spans  [][]int
		room   int
		colour bool
		want   string
	}{
		{"short line", [][]int{{6, 10}}, 40, false, "short line"},
		{"short line", [][]int{{6, 10}}, 0, true, "short " + esc + "line" + reset},
		{"tab\there\x01", [][]int{{0, 3}}, 0, false, "tab here\uFFFD"},
		// Cut after the match, then around it: a third of the room before.
		{"match then a long tail of words", [][]int{{0, 5}}, 12, false, "match then …"},
		{"a long head of words, then the match", [][]int{{31, 36}}, 15, false, "…then the match"},
		{"a long head of words, then the match and more", [][]int{{31, 36}}, 15, true, "… the " + esc + "match" + reset + " an…"},
		// Wide runes take two columns; a cut never splits one.
		{"日本語のテキストです", [][]int{{0, 3}}, 7, false, "日本語…"},
		// A match cut by the end of the room is closed.
		{"xx needle", [][]int{{3, 9}}, 6, true, "…x " + esc + "ne" + reset + "…"},
		// Empty matches highlight nothing.
		{"abc", [][]int{{1, 1}}, 0, true, "abc"},
	} {
		got := string(appendCut(nil, []byte(tc.text), tc.spans, tc.room, tc.colour))
		if got != tc.want {
			t.Errorf("appendCut(%q, %v, %d, %v) = %q, want %q", tc.text, tc.spans, tc.room, tc.colour, got, tc.want)
		}
	}
}

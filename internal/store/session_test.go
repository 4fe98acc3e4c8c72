package store

import (
	"strings"
	"testing"
)

func TestShortIDs(t *testing.T) {
	for _, tc := range []struct {
		ids, want []string
	}{
		{[]string{"session-4f1c2a9e-8b3d", "session-4f1d0000-0000"}, []string{"session-4f1c", "session-4f1d"}},
		{[]string{"session-4f1c2a9e-8b3d", "session-4f1c2a9f-0000"}, []string{"session-4f1c2a9e", "session-4f1c2a9f"}},
		{[]string{"short", "shorter"}, []string{"short", "shorter"}},
		// A cut never splits a UTF-8 sequence.
		{[]string{"task:review/ü1", "task:review/ü2"}, []string{"task:review/ü1", "task:review/ü2"}},
		{[]string{"aaaaaaaaaaaüx", "b"}, []string{"aaaaaaaaaaaü", "b"}},
	} {
		got := ShortIDs(tc.ids, 12)
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("ShortIDs(%q) = %q, want %q", tc.ids, got, tc.want)
		}
	}
}

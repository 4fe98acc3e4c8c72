package store

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// TestOpenEachSessionAll: with no arguments, OpenEachSession names every
// session of the store once, sorted, a damaged one too (the command reads
// it and says what is wrong), and gives failed each entry that is no
// session in its own words, never as a session "not found" (issue 16: an
// unreadable project folder made export --all say so).
func TestOpenEachSessionAll(t *testing.T) {
	ctx := context.Background()
	root := newStore(t, 4, "session-b", "session-a", "broken")
	logs, _ := filepath.Glob(filepath.Join(root, "--w--", "broken", "session*.jsonl*"))
	if len(logs) != 1 || os.Truncate(logs[0], 0) != nil {
		t.Fatalf("logs of broken: %q", logs)
	}
	os.Mkdir(filepath.Join(root, "--w--", "not~id"), 0o700)
	os.WriteFile(filepath.Join(root, "--w--", "not~id", filepath.Base(logs[0])), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(root, "--w--", filepath.Base(logs[0])), []byte("x"), 0o600)
	want := map[string]string{
		"not~id":               `^folder name "not~id" is not an encoded session id: .* \(.*not~id\)$`,
		filepath.Base(logs[0]): `^log file placed directly in a project folder \(old flat layout\) \(.*--w--.session.*\)$`,
	}
	if os.Symlink(t.TempDir(), filepath.Join(root, "--elsewhere--")) == nil {
		want["--elsewhere--"] = `^.*--elsewhere-- is a symbolic link, which dshctl does not follow in a store$`
	}
	if os.Geteuid() != 0 && os.Mkdir(filepath.Join(root, "--closed--"), 0o000) == nil { // root reads it anyway
		t.Cleanup(func() { os.Chmod(filepath.Join(root, "--closed--"), 0o700) })
		want["--closed--"] = `^project folder .*--closed-- cannot be read \(permission denied\)$`
	}
	got := map[string]string{}
	ss, err := OpenEachSession(ctx, Request{Flag: root, Getenv: env(nil)}, nil, Options{}, func(arg string, err error) {
		got[arg] = err.Error()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	var ids []string
	for _, s := range ss.Sessions {
		ids = append(ids, s.ID)
		if s.Service != ss.Whole {
			t.Errorf("%s: not the whole store's service", s.ID)
		}
	}
	if !slices.Equal(ids, []string{"broken", "session-a", "session-b"}) {
		t.Errorf("sessions %q", ids)
	}
	if len(got) != len(want) {
		t.Errorf("failed %q, want %d", got, len(want))
	}
	for name, re := range want {
		if !regexp.MustCompile(re).MatchString(got[name]) {
			t.Errorf("%s: %q, want %s", name, got[name], re)
		}
	}
}

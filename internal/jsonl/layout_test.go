package jsonl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProjectKey(t *testing.T) {
	for _, c := range []struct{ cwd, want string }{
		{"/home/u/proj", "--home-u-proj--"},
		{"/", "--root--"},
		{`C:\Users\me`, "--C-Users-me--"},
		{"/tmp/a b", "--tmp-a~0020b--"},
		{"//a::b\\\\c/", "--a-b-c---"},
		{"/home/dev/My Projects/café ☕/日本語 🚀", "--home-dev-My~0020Projects-caf~00E9~0020~2615-~65E5~672C~8A9E~0020~D83D~DE80--"},
		{"~/x", "--~007E-x--"},
		{"/" + strings.Repeat("a", 300), "--" + strings.Repeat("a", 251) + "--"},
	} {
		got, err := ProjectKey(c.cwd)
		if err != nil || got != c.want {
			t.Errorf("ProjectKey(%q) = %q, %v; want %q", c.cwd, got, err, c.want)
		}
	}
	if _, err := ProjectKey(""); err == nil {
		t.Error("ProjectKey(\"\") succeeded")
	}
	if got, _ := projectFolder(""); got != NoCwdFolder {
		t.Errorf("projectFolder(\"\") = %q", got)
	}
}

func TestSegments(t *testing.T) {
	for _, c := range []struct{ id, want string }{
		{"session-4f1c2a9e", "session-4f1c2a9e"},
		{"task:review/01 ü~x", "task~003Areview~002F01~0020~00FC~007Ex"},
		{".", "~002E"},
		{"..", "~002E~002E"},
		{"...", "..."},
		{"../x", "..~002Fx"},
		{"/etc/passwd", "~002Fetc~002Fpasswd"},
		{"a\x00b", "a~0000b"},
		{`a\b`, "a~005Cb"},
		{"🚀", "~D83D~DE80"},
	} {
		got, err := EncodeSegment(c.id)
		if err != nil || got != c.want {
			t.Errorf("EncodeSegment(%q) = %q, %v; want %q", c.id, got, err, c.want)
			continue
		}
		if strings.ContainsAny(got, "/\\:\x00") || got == "." || got == ".." {
			t.Errorf("EncodeSegment(%q) = %q escapes its folder", c.id, got)
		}
		back, err := DecodeSegment(got)
		if err != nil || back != c.id {
			t.Errorf("DecodeSegment(%q) = %q, %v; want %q", got, back, err, c.id)
		}
	}
	if _, err := EncodeSegment(""); err == nil {
		t.Error("EncodeSegment(\"\") succeeded")
	}
	if _, err := EncodeSegment("a\xffb"); err == nil {
		t.Error("EncodeSegment of invalid UTF-8 succeeded")
	}
	// Only canonical names decode, so no two folders share an id.
	for _, name := range []string{"", ".", "..", "a/b", "~0041", "~002e", "~00E", "a~002Eb", "~D83D", "~DE80~D83D", "a b", "x~zzzz"} {
		if id, err := DecodeSegment(name); err == nil {
			t.Errorf("DecodeSegment(%q) = %q, want an error", name, id)
		}
	}
	// The character at fault is named as itself (issue 24 item 12: a
	// UTF-8 name was said to hold an unescaped 'Ã').
	for name, want := range map[string]string{
		"session-ü":   `unescaped 'ü'`,
		"evil\x1b[":   `unescaped '\x1b'`,
		"bad\xffname": "unescaped byte 0xff, not UTF-8",
	} {
		if _, err := DecodeSegment(name); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("DecodeSegment(%q): %v, want it to end %s", name, err, want)
		}
	}
}

func TestLogNames(t *testing.T) {
	for _, c := range []struct {
		name string
		gen  int
		enc  Encoding
		ok   bool
	}{
		{"session.jsonl", 0, None, true},
		{"session.jsonl.zstd", 0, Zstd, true},
		{"session.v2.jsonl", 2, None, true},
		{"session.v12.jsonl.zstd", 12, Zstd, true},
		{"session.v0.jsonl", 0, "", false},
		{"session.v02.jsonl", 0, "", false},
		{"session.v.jsonl", 0, "", false},
		{"session.v2.jsonl.zstd.3f2a9c1b0d4e.tmp", 0, "", false},
		{"session.lock", 0, "", false},
		{"other.jsonl", 0, "", false},
	} {
		gen, enc, ok := ParseLogName(c.name)
		if gen != c.gen || enc != c.enc || ok != c.ok {
			t.Errorf("ParseLogName(%q) = %d, %q, %v", c.name, gen, enc, ok)
		}
		if ok && LogName(gen, enc) != c.name {
			t.Errorf("LogName(%d, %s) = %q", gen, enc, LogName(gen, enc))
		}
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"task:review/01 ü~x": "task_review_01___x",
		"a.b-c_d":            "a_b-c_d",
		"🚀x":                 "__x",
	} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSessionFromPath(t *testing.T) {
	root := filepath.Join(fixturesDir(t), "dsh-0.1.0", "jsonl-zstd")
	dir := filepath.Join(root, "--srv-repo--", "task~003Areview~002F01~0020~00FC~007Ex")
	for _, p := range []string{dir, filepath.Join(dir, "session.jsonl.zstd")} {
		r, id, err := SessionFromPath(p)
		if err != nil || r != root || id != "task:review/01 ü~x" {
			t.Errorf("SessionFromPath(%s) = %s, %q, %v", p, r, id, err)
		}
	}
	for _, p := range []string{root, filepath.Join(root, "--srv-repo--"), filepath.Join(root, "missing")} {
		if _, _, err := SessionFromPath(p); err == nil {
			t.Errorf("SessionFromPath(%s) succeeded", p)
		}
	}
	tmp := t.TempDir()
	f := filepath.Join(tmp, "notes.txt")
	os.WriteFile(f, nil, 0o600)
	if _, _, err := SessionFromPath(f); err == nil {
		t.Error("SessionFromPath of a non-log file succeeded")
	}
}

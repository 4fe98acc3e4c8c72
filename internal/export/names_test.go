package export

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

func TestSafeName(t *testing.T) {
	long := strings.Repeat("a", 300)
	for in, want := range map[string]string{
		"session-4f1c2a9e-8b3d":       "session-4f1c2a9e-8b3d",
		"task:review/01 ü~x":          "task_review_01___x",
		"../../etc/passwd":            "______etc_passwd",
		`C:\Windows\system32`:         "C__Windows_system32",
		"/abs":                        "_abs",
		"a.b-c_d":                     "a_b-c_d",
		"🚀x":                          "__x", // two UTF-16 units, as dsh's JavaScript counts
		"\xffz":                       "_z",
		"":                            "",
		long:                          strings.Repeat("a", 183) + "~9835fa6bf4e20a9b",
		strings.Repeat("é", 150) + "": strings.Repeat("_", 150),
	} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%.40q) = %q, want %q", in, got, want)
		}
	}
	if a, b := SafeName(long), SafeName(long+"b"); a == b || len(a) != maxSafeLen || len(b) != maxSafeLen {
		t.Errorf("long ids with one prefix share a name or pass the bound: %q %q", a, b)
	}
}

func TestFileNameAndLogName(t *testing.T) {
	if got := FileName("task:review/01 ü~x"); got != "dsh-session-task_review_01___x.zip" {
		t.Errorf("FileName = %q", got)
	}
	for v, want := range map[int]string{0: "session.jsonl", 1: "session.v1.jsonl", 2: "session.v2.jsonl", 4: "session.v4.jsonl"} {
		if got := LogName(v); got != want {
			t.Errorf("LogName(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestNamer(t *testing.T) {
	n := newNamer()
	for _, c := range []struct{ id, want string }{
		{"a:b", "a_b"},
		{"a/b", "a_b~2"},
		{"A_B", "A_B~3"}, // names compare case-insensitively
		{"", "_"},
		{"con", "con~"},
		{"COM1", "COM1~"},
		{"COM10", "COM10"},
		{"CON~", "CON_"},
		{"../../etc/passwd", "______etc_passwd"},
		{"task:review/01 ü~x", "task_review_01___x"},
	} {
		if got := n.name(c.id); got != c.want {
			t.Errorf("name(%q) = %q, want %q", c.id, got, c.want)
		}
	}
}

// TestFileNamer: the files of an export directory are prefixed, so a
// Windows device name needs no suffix there (dsh-session-CON.zip, as a
// single export names it); names still differ case-insensitively.
func TestFileNamer(t *testing.T) {
	n := newFileNamer()
	for _, c := range []struct{ id, want string }{
		{"CON", "CON"},
		{"con", "con~2"},
		{"nul", "nul"},
		{"a:b", "a_b"},
	} {
		if got := n.name(c.id); got != c.want {
			t.Errorf("name(%q) = %q, want %q", c.id, got, c.want)
		}
	}
}

// checkEntryName fails t unless name is a path that extracts inside the
// folder it is extracted to, on any OS: relative, slash-separated, no
// empty, "." or ".." element, no backslash or drive colon, ASCII, elements
// short enough for any file system.
func checkEntryName(t interface{ Fatalf(string, ...any) }, name string) {
	if !fs.ValidPath(name) || strings.ContainsAny(name, `\:`) || filepath.IsAbs(name) || strings.HasPrefix(name, "/") {
		t.Fatalf("unsafe entry name %q", name)
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." || elem == "." || elem == "" || len(elem) > 255 || reservedOnWindows(elem) {
			t.Fatalf("entry name %q has element %q", name, elem)
		}
	}
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf || name[i] < 0x20 {
			t.Fatalf("entry name %q is not printable ASCII", name)
		}
	}
}

// TestNamesProperty: whatever ids a store holds, every subagent entry name
// is safe, every file name is one path element, and no two ids share a
// name.
func TestNamesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids := rapid.SliceOfDistinct(rapid.OneOf(
			rapid.String(),
			rapid.StringMatching(`[a-zA-Z0-9./\\: ~_-]{0,12}`),
			rapid.SampledFrom([]string{"..", ".", "/", "../../etc/passwd", "task:review/01 ü~x", "CON", "con", "a_b", "a:b"}),
		), rapid.ID[string]).Draw(t, "ids")
		n, files := newNamer(), newFileNamer()
		seen := map[string]string{}
		for _, id := range ids {
			name := subagentsDir + n.name(id) + "/" + LogName(rapid.IntRange(0, 4).Draw(t, "v"))
			checkEntryName(t, name)
			folder := strings.ToLower(strings.Split(name, "/")[1])
			if other, ok := seen[folder]; ok {
				t.Fatalf("ids %q and %q share folder %q", other, id, folder)
			}
			seen[folder] = id
			file := "dsh-session-" + files.name(id) + ".zip"
			if filepath.Base(file) != file || len(file) > 255 {
				t.Fatalf("file name %q of %q is not one short path element", file, id)
			}
		}
	})
}

func FuzzNames(f *testing.F) {
	for _, s := range []string{"../../etc/passwd", "task:review/01 ü~x", "", "..", "CON", "a:b", strings.Repeat("x", 300)} {
		f.Add(s, "a/b")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		n := newNamer()
		na, nb := n.name(a), n.name(b)
		checkEntryName(t, subagentsDir+na+"/session.jsonl")
		checkEntryName(t, subagentsDir+nb+"/session.jsonl")
		if a != b && strings.EqualFold(na, nb) {
			t.Fatalf("ids %q and %q share name %q", a, b, na)
		}
		if f := FileName(a); filepath.Base(f) != f || len(f) > 255 {
			t.Fatalf("FileName(%q) = %q", a, f)
		}
	})
}

package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// recordFS is the real file system, recording the folders made and
// synced.
type recordFS struct {
	made, synced []string
	failSync     error
}

func (r *recordFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }
func (r *recordFS) Mkdir(name string, perm fs.FileMode) error {
	r.made = append(r.made, name)
	return os.Mkdir(name, perm)
}
func (r *recordFS) SyncDir(name string) error {
	if r.failSync != nil {
		return r.failSync
	}
	r.synced = append(r.synced, name)
	return SyncDir(name)
}

// TestMkdirAllSyncsParents checks that every folder MkdirAll makes has its
// entry synced into its parent, and that existing folders cost nothing
// (durability review finding 11: a backup folder made for a repair whose
// entry was not durable).
func TestMkdirAllSyncsParents(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "state", "dshctl", "backups", "id")
	r := &recordFS{}
	if err := MkdirAll(r, dir, 0o700); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(base, "state"), filepath.Join(base, "state", "dshctl"),
		filepath.Join(base, "state", "dshctl", "backups"), dir}
	if !slices.Equal(r.made, want) {
		t.Errorf("made %v, want %v", r.made, want)
	}
	for _, d := range want {
		if !slices.Contains(r.synced, filepath.Dir(d)) {
			t.Errorf("the parent of %s was not synced (synced: %v)", d, r.synced)
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("Stat(%s): %v, %v", dir, fi, err)
	}
	again := &recordFS{}
	if err := MkdirAll(again, dir, 0o700); err != nil || len(again.made)+len(again.synced) != 0 {
		t.Errorf("an existing folder: made %v, synced %v, %v", again.made, again.synced, err)
	}
	boom := errors.New("injected")
	failing := &recordFS{failSync: boom}
	if err := MkdirAll(failing, filepath.Join(base, "other"), 0o700); !errors.Is(err, boom) {
		t.Errorf("a failed sync: %v, want it reported", err)
	}
}

// TestPublish: without replace a file at the name is never replaced (the
// temporary file stays for the caller to remove); with replace it is.
func TestPublish(t *testing.T) {
	dir := t.TempDir()
	tmp := func(text string) string {
		f, err := os.CreateTemp(dir, ".tmp-*")
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(text)
		f.Close()
		return f.Name()
	}
	read := func(name string) string {
		b, _ := os.ReadFile(name)
		return string(b)
	}
	path := filepath.Join(dir, "out")
	first := tmp("first")
	if err := Publish(first, path, false); err != nil || read(path) != "first" {
		t.Fatalf("new name: %v, %q", err, read(path))
	}
	if _, err := os.Lstat(first); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the temporary file is still there: %v", err)
	}
	second := tmp("second")
	if err := Publish(second, path, false); !errors.Is(err, fs.ErrExist) || read(path) != "first" || read(second) != "second" {
		t.Fatalf("existing name without replace: %v, %q", err, read(path))
	}
	if err := Publish(second, path, true); err != nil || read(path) != "second" {
		t.Fatalf("existing name with replace: %v, %q", err, read(path))
	}
}

// TestCreateIn: a file is made in a folder, never through a folder that is
// a symbolic link, and never over a file or a link at its name (issue 24
// item 14: a backup followed a linked backups/<id> folder).
func TestCreateIn(t *testing.T) {
	dir := t.TempDir()
	f, err := CreateIn(dir, "a", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := CreateIn(dir, "a", 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CreateIn over a file: %v", err)
	}
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, "link")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if _, err := CreateIn(filepath.Join(dir, "link"), "b", 0o600); !errors.Is(err, ErrSymlink) {
		t.Errorf("CreateIn in a linked folder: %v, want ErrSymlink", err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "c"), filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateIn(dir, "c", 0o600); err == nil {
		t.Errorf("CreateIn at a symbolic link succeeded")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("a file was made through a link: %v", entries)
	}
}

// TestTypeName checks the name of every type of file a message may be
// about; a character device is a device too, and must be named as one.
func TestTypeName(t *testing.T) {
	for _, c := range []struct {
		mode fs.FileMode
		want string
	}{
		{0o644, "a regular file"},
		{fs.ModeDir | 0o755, "a directory"},
		{fs.ModeSymlink | 0o777, "a symbolic link"},
		{fs.ModeNamedPipe, "a FIFO"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeDevice | fs.ModeCharDevice, "a character device"},
		{fs.ModeDevice, "a block device"},
		{fs.ModeIrregular, "of an unknown type"},
	} {
		if got := TypeName(c.mode); got != c.want {
			t.Errorf("TypeName(%v) = %q, want %q", c.mode, got, c.want)
		}
	}
}

package jsonl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadDirMatchesOS: readDir sees what os.ReadDir sees — names, order
// and types — over several getdents calls.
func TestReadDirMatchesOS(t *testing.T) {
	dir := t.TempDir()
	for i := range 400 { // more than one 8 KiB getdents buffer
		name := fmt.Sprintf("f%03d-%s", i, strings.Repeat("x", i%200))
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"session-a", "~002E", "d"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("d", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("readDir: %d entries, os.ReadDir: %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name() != want[i].Name() || got[i].Type() != want[i].Type() || got[i].IsDir() != want[i].IsDir() {
			t.Errorf("entry %d: readDir %v, os.ReadDir %v", i, got[i], want[i])
		}
	}
	if _, err := readDir(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := readDir(filepath.Join(dir, "f000-")); err == nil {
		t.Error("a file read as a folder")
	}
}

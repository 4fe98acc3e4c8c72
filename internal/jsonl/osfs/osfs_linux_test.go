package osfs

import (
	"context"
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

// TestCopyRangeKeepsHoles checks that a backup of a sparse torn tail (a
// log extended by a crash and never written: 500 MB of it cost 2 s of CPU
// through a buffer) costs neither the copy nor the disk: its holes stay
// holes, and the copy is the kernel's.
func TestCopyRangeKeepsHoles(t *testing.T) {
	dir := t.TempDir()
	const size = 256 << 20
	src := sparseLog(t, filepath.Join(dir, "log"), size, [2]int64{0, 600})
	dst, err := OS{}.OpenFile(filepath.Join(dir, "backup"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	done, err := copyKernel(context.Background(), dst, src, 592, size)
	if err != nil || done != size-592 {
		t.Fatalf("copyKernel: %d bytes, %v", done, err)
	}
	fi, err := dst.Stat()
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if fi.Size() != size-592 || ok && st.Blocks*512 > 1<<20 {
		t.Fatalf("backup of %d bytes, %d allocated; want %d, the holes kept", fi.Size(), st.Blocks*512, size-592)
	}
}

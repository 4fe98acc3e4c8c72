package jsonl

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCopyRangeKeepsHoles checks that a backup of a sparse torn tail (a
// log extended by a crash and never written: 500 MB of it cost 2 s of CPU
// through a buffer) costs neither the copy nor the disk: its holes stay
// holes, and the copy is the kernel's.
func TestCopyRangeKeepsHoles(t *testing.T) {
	dir := t.TempDir()
	const size = 256 << 20
	src := sparseLog(t, filepath.Join(dir, "log"), size, [2]int64{0, 600})
	dst, err := osFS{}.OpenFile(filepath.Join(dir, "backup"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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

package osfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// sparseLog writes a file of size bytes holding data (a byte pattern) only
// at the given [from, to) spans: the rest is holes.
func sparseLog(t *testing.T, path string, size int64, spans ...[2]int64) File {
	t.Helper()
	f, err := OS{}.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	w := f.(io.WriterAt)
	for _, s := range spans {
		data := make([]byte, s[1]-s[0])
		for i := range data {
			data[i] = byte('a' + (s[0]+int64(i))%23)
		}
		if _, err := w.WriteAt(data, s[0]); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestCopyRange checks the copy of a backup and of a log rewrite, by the
// kernel or through a buffer: the bytes of every range land at the
// destination's offset, which ends past them (holes at the start, in the
// middle and at the end of the range included), and a source shorter than
// the range fails.
func TestCopyRange(t *testing.T) {
	dir := t.TempDir()
	const size = 6 << 20
	src := sparseLog(t, filepath.Join(dir, "log"), size, [2]int64{0, 10000}, [2]int64{2 << 20, 2<<20 + 5000}, [2]int64{5 << 20, 5<<20 + 1})
	want := make([]byte, size)
	if err := ReadFullAt(src, want, 0); err != nil {
		t.Fatal(err)
	}
	ranges := [][2]int64{{0, size}, {592, size}, {10000, 2<<20 + 100}, {5000, 5 << 20}, {3 << 20, 4 << 20}, {5 << 20, 5<<20 + 1}, {7, 7}}
	for _, appendMode := range []bool{false, true} { // O_APPEND: copy_file_range(2) refuses it
		for i, r := range ranges {
			flag := os.O_RDWR | os.O_CREATE | os.O_EXCL
			if appendMode {
				flag |= os.O_APPEND
			}
			path := filepath.Join(dir, "backup")
			os.Remove(path)
			dst, err := OS{}.OpenFile(path, flag, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			dst.Write([]byte("before:"))
			if err := CopyRange(context.Background(), dst, src, r[0], r[1]); err != nil {
				t.Fatalf("range %d %v (append %v): %v", i, r, appendMode, err)
			}
			dst.Write([]byte(":after"))
			dst.Close()
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			exp := append(append([]byte("before:"), want[r[0]:r[1]]...), ":after"...)
			if !bytes.Equal(got, exp) {
				t.Fatalf("range %d %v (append %v): %d bytes differ from the %d of the log", i, r, appendMode, len(got), len(exp))
			}
		}
	}
	dst, err := OS{}.OpenFile(filepath.Join(dir, "short"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := CopyRange(context.Background(), dst, src, size-10, size+10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a range past the end: %v, want io.ErrUnexpectedEOF", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := CopyRange(ctx, dst, src, 0, size); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled copy: %v, want context.Canceled", err)
	}
	if fi, _ := dst.Stat(); fi.Size() != 0 {
		t.Errorf("a cancelled copy wrote %d bytes", fi.Size())
	}
}

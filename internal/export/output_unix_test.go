//go:build unix

package export

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWriteFileNotRegular checks that nothing but a regular file is ever
// replaced, with or without force: a FIFO, a socket, a device and a
// directory are refused and left as they are (issue 24 item 1: as root,
// export --force -O /dev/null replaced the system's /dev/null with a ZIP).
func TestWriteFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	paths := map[string]fs.FileMode{fifo: fs.ModeNamedPipe, sock: fs.ModeSocket, dir: fs.ModeDir}
	if os.Geteuid() == 0 {
		// A copy of /dev/null (char 1 3 on Linux), which only root makes.
		null := filepath.Join(dir, "null")
		var st syscall.Stat_t
		if err := syscall.Stat(os.DevNull, &st); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(st.Rdev)); err != nil {
			t.Fatal(err)
		}
		paths[null] = fs.ModeDevice | fs.ModeCharDevice
	}
	for path, want := range paths {
		for _, force := range []bool{false, true} {
			_, err := WriteFile(context.Background(), path, WriteOptions{Force: force}, nil, writeText("zip"))
			if err == nil || errors.Is(err, ErrExists) && force {
				t.Errorf("WriteFile(%s, force %v) = %v, want a refusal", filepath.Base(path), force, err)
			}
			if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != want {
				t.Errorf("%s after WriteFile(force %v): %v, %v, want type %v", filepath.Base(path), force, fi.Mode(), err, want)
			}
		}
	}
}

// TestWriteFileStream checks that with Stream a FIFO and a character
// device are written into, never replaced: the FIFO's reader gets the
// bytes, /dev/null stays what it is, and the wait for a FIFO's reader ends
// with the context.
func TestWriteFileStream(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	n, err := WriteFile(context.Background(), fifo, WriteOptions{Stream: true}, nil, writeText("zip"))
	if err != nil || n != 3 {
		t.Fatalf("WriteFile(fifo, stream) = %d, %v", n, err)
	}
	if s := <-got; s != "zip" {
		t.Errorf("the FIFO's reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the FIFO after the export: %v, %v", fi.Mode(), err)
	}

	// Through a symbolic link, as /dev/stdout is one.
	link := filepath.Join(dir, "null")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{os.DevNull, link} {
		if n, err := WriteFile(context.Background(), path, WriteOptions{Stream: true}, nil, writeText("zip")); err != nil || n != 3 {
			t.Errorf("WriteFile(%s, stream) = %d, %v", path, n, err)
		}
	}
	if fi, err := os.Lstat(os.DevNull); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("%s after the export: %v, %v", os.DevNull, fi.Mode(), err)
	}

	// No reader: the wait ends with the context.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := WriteFile(ctx, fifo, WriteOptions{Stream: true}, nil, writeText("zip")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WriteFile(fifo without a reader) = %v, want the context's error", err)
	}
}

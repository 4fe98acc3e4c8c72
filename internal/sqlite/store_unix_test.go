//go:build unix

package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
	"golang.org/x/sys/unix"
)

func TestOpenRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo.sqlite")
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	_, err := Open(p, Options{})
	wantKind(t, err, seam.ErrInvalid, "Open of a FIFO")
	if !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Open: %q", err)
	}
}

// TestLockFileTraps checks that the .dshctl-lock file is never opened
// through a symbolic link (which would create a file at its target) nor
// blocks on a FIFO, and that one a root append makes belongs to the
// database's owner (durability review findings 6, 7).
func TestLockFileTraps(t *testing.T) {
	s := newStore(t, Schema17, Options{})
	stored(t, s, "a", 2)
	lock := s.Path() + lockSuffix
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, lock); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "a", seam.Write); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("write open through a symlinked lock file: %v", err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Errorf("the write open created the symlink's target")
	}
	os.Remove(lock)
	if err := unix.Mkfifo(lock, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Open(ctx, "a", seam.Write); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("write open with a FIFO lock file: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("write open blocked on a FIFO lock file")
	}
	os.Remove(lock)
	if os.Geteuid() != 0 {
		t.Skip("giving the lock file to the database's owner needs root")
	}
	if err := os.Chown(s.Path(), 1000, 1000); err != nil {
		t.Fatal(err)
	}
	h, err := s.Open(ctx, "a", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	fi, err := os.Stat(lock)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1000 || st.Gid != 1000 {
		t.Errorf("the lock file a root append made belongs to %d:%d, not the database's owner 1000:1000", st.Uid, st.Gid)
	}
}

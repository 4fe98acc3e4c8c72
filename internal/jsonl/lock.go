package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dshctl/dshctl/internal/seam"
	"golang.org/x/sys/unix"
)

// WriterActive reports whether a writer holds the session's lock. On Linux
// it looks the lock up in /proc/locks, which takes nothing; elsewhere it
// probes with flock(LOCK_SH|LOCK_NB) and drops the shared lock at once (a
// writer that tries to lock in that instant fails as if busy).
func (s *Store) WriterActive(ctx context.Context, id string) (bool, error) {
	if err := s.check(ctx, "probe lock"); err != nil {
		return false, err
	}
	d, err := s.find("probe lock", id)
	if err != nil {
		return false, err
	}
	path := filepath.Join(d.dir, lockName)
	f, err := s.fs.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, &seam.Error{Kind: seam.ErrIO, Op: "probe lock", ID: id, Pos: seam.NoPos, Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, &seam.Error{Kind: seam.ErrIO, Op: "probe lock", ID: id, Pos: seam.NoPos, Err: err}
	}
	if held, ok := procLocksHeld(fi); ok {
		return held, nil
	}
	switch err := f.Flock(unix.LOCK_SH | unix.LOCK_NB); {
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	case err != nil:
		return false, &seam.Error{Kind: seam.ErrIO, Op: "probe lock", ID: id, Pos: seam.NoPos, Err: err}
	}
	return false, f.Flock(unix.LOCK_UN)
}

// procLocksHeld looks for a flock on the file fi in /proc/locks; ok is
// false when the table cannot be read.
func procLocksHeld(fi fs.FileInfo) (held, ok bool) {
	_, held, ok = procLockHolder(fi)
	return held, ok
}

// procLockHolder is procLocksHeld, also returning the pid /proc/locks
// gives for the holder (0 when it shows none, as across pid namespaces).
func procLockHolder(fi fs.FileInfo) (pid int, held, ok bool) {
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, false, false
	}
	dev, ino, _ := fileIdentity(fi)
	want := []byte(fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino))
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		// "1: FLOCK ADVISORY WRITE <pid> <maj:min:ino> 0 EOF"; waiters
		// have "->" after the index.
		if len(f) < 6 || bytes.Equal(f[1], []byte("->")) || !bytes.Equal(f[1], []byte("FLOCK")) {
			continue
		}
		if bytes.Equal(f[5], want) {
			pid, _ = strconv.Atoi(string(f[4]))
			return max(pid, 0), true, true
		}
	}
	return 0, false, true
}

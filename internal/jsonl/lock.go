package jsonl

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/seam"
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
	if held, ok := osfs.ProcLocksHeld(fi); ok {
		return held, nil
	}
	switch err := f.TryLock(false); {
	case errors.Is(err, errLockBusy):
		return true, nil
	case err != nil:
		return false, &seam.Error{Kind: seam.ErrIO, Op: "probe lock", ID: id, Pos: seam.NoPos, Err: err}
	}
	return false, f.Unlock()
}

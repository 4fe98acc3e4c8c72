package sqlite

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// openLockFile opens the lock file for reading and writing with the extra
// flag (creating it with os.O_CREATE), refusing a symbolic link (or any
// reparse point): Windows has no O_NOFOLLOW, so it is looked for first.
func openLockFile(path string, flag int) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errLockSymlink}
	}
	return os.OpenFile(path, flag|os.O_RDWR, 0o600)
}

func overlapped(off int64) *windows.Overlapped {
	return &windows.Overlapped{Offset: uint32(off), OffsetHigh: uint32(off >> 32)}
}

// lockRange takes an exclusive lock on the byte at off without waiting.
func lockRange(f *os.File, off int64) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, overlapped(off))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errBusy
	}
	return err
}

func unlockRange(f *os.File, off int64) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, overlapped(off))
}

// rangeLocked reports whether another handle holds the byte at off: it
// takes the lock and drops it at once.
func rangeLocked(f *os.File, off int64) (bool, error) {
	switch err := lockRange(f, off); {
	case errors.Is(err, errBusy):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, unlockRange(f, off)
}

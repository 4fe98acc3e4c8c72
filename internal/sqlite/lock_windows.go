package sqlite

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
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

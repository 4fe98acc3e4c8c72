//go:build unix

package sqlite

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openLockFile opens the lock file for reading and writing with the extra
// flag (creating it 0600 with os.O_CREATE): never through a symbolic
// link, and never blocking on a FIFO.
func openLockFile(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag|os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
}

func byteRange(typ int16, off int64) *unix.Flock_t {
	return &unix.Flock_t{Type: typ, Whence: 0, Start: off, Len: 1}
}

// lockRange takes an exclusive lock on the byte at off without waiting.
func lockRange(f *os.File, off int64) error {
	err := unix.FcntlFlock(f.Fd(), setLock, byteRange(unix.F_WRLCK, off))
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return errBusy
	}
	return err
}

func unlockRange(f *os.File, off int64) error {
	return unix.FcntlFlock(f.Fd(), setLock, byteRange(unix.F_UNLCK, off))
}

// rangeLocked reports whether another lock owner holds the byte at off.
func rangeLocked(f *os.File, off int64) (bool, error) {
	lk := byteRange(unix.F_WRLCK, off)
	if err := unix.FcntlFlock(f.Fd(), getLock, lk); err != nil {
		return false, err
	}
	return lk.Type != unix.F_UNLCK, nil
}

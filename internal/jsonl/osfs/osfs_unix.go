//go:build unix

package osfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFile opens a store file for writing: O_NOFOLLOW refuses a symbolic
// link as the last component, O_NONBLOCK keeps a FIFO from blocking the
// open, and fstat then refuses anything but a regular file.
func openFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, nofollowError(name, err)
	}
	if err := regularOnly(name, f); err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// nofollowError turns the failure of an O_NOFOLLOW open of a symbolic link
// (ELOOP, or EMLINK on FreeBSD) into ErrSymlink.
func nofollowError(name string, err error) error {
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
		if fi, lerr := os.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return SymlinkError("open", name)
		}
	}
	return err
}

type osFile struct{ *os.File }

func (f osFile) TryLock(exclusive bool) error { return flock(int(f.Fd()), lockHow(exclusive)) }
func (f osFile) Unlock() error                { return flock(int(f.Fd()), unix.LOCK_UN) }

func lockHow(exclusive bool) int {
	if exclusive {
		return unix.LOCK_EX | unix.LOCK_NB
	}
	return unix.LOCK_SH | unix.LOCK_NB
}

// flock applies flock(2), retrying on EINTR; a held lock is ErrLockBusy.
func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return ErrLockBusy
		}
		return err
	}
}

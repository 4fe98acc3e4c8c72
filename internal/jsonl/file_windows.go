//go:build windows

package jsonl

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// openFile opens a store file for writing, refusing a symbolic link (or
// any reparse point) and anything but a regular file. Windows has no
// O_NOFOLLOW: the link is looked for first, and the open checked after.
func openFile(name string, flag int, perm fs.FileMode) (file, error) {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, symlinkError("open", name)
	}
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if err := regularOnly(name, f); err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// openReadOnly opens name for reading, as openFile does.
func openReadOnly(name string) (file, error) { return openFile(name, os.O_RDONLY, 0) }

// readDir reads a folder, sorted by name.
func readDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

type osFile struct{ *os.File }

// TryLock locks the file's first byte with LockFileEx, failing at once when
// another process holds it: what flock(LOCK_NB) is on Unix.
func (f osFile) TryLock(exclusive bool) error {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errLockBusy
	}
	return err
}

func (f osFile) Unlock() error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// Chown does nothing: Windows files have no Unix owner to keep.
func (f osFile) Chown(uid, gid int) error { return nil }

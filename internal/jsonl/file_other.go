//go:build !unix && !windows

package jsonl

import (
	"errors"
	"io/fs"
	"os"
)

// The portable fallback, for systems without flock or LockFileEx: reads
// work; writes fail, since without a cross-process lock a write could
// interleave with dsh's.

// openFile opens a store file, refusing a symbolic link and anything but a
// regular file.
func openFile(name string, flag int, perm fs.FileMode) (file, error) {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
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

func openReadOnly(name string) (file, error)     { return openFile(name, os.O_RDONLY, 0) }
func readDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

type osFile struct{ *os.File }

var errNoLocks = errors.New("cross-process file locks are not supported on this system")

func (osFile) TryLock(bool) error       { return errNoLocks }
func (osFile) Unlock() error            { return errNoLocks }
func (osFile) Chown(uid, gid int) error { return nil }

//go:build !unix

package jsonl

import (
	"io/fs"
	"os"
)

// openFile opens a store file, refusing a symbolic link (or any reparse
// point) and anything but a regular file. Without O_NOFOLLOW the link is
// looked for first, and the open checked after.
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

// Chown does nothing: these systems' files have no Unix owner to keep.
func (osFile) Chown(uid, gid int) error { return nil }

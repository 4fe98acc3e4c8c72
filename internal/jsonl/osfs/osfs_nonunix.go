//go:build !unix

package osfs

import (
	"io/fs"
	"os"
)

// openFile opens a store file, refusing a symbolic link (or any reparse
// point) and anything but a regular file. Without O_NOFOLLOW the link is
// looked for first, and the open checked after.
func openFile(name string, flag int, perm fs.FileMode) (File, error) {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, SymlinkError("open", name)
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

type osFile struct{ *os.File }

// Chown does nothing: these systems' files have no Unix owner to keep.
func (osFile) Chown(uid, gid int) error { return nil }

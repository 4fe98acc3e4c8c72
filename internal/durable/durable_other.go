//go:build !unix

package durable

import (
	"io/fs"
	"os"
	"path/filepath"
)

// SyncDir does nothing: Windows cannot open a folder to flush it, and NTFS
// journals the entries of folders itself.
func SyncDir(string) error { return nil }

// Owner reports no owner: there is none that Chown could keep.
func Owner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// CanChown reports false: files have no Unix owner to give.
func CanChown() bool { return false }

// createIn looks for a link first: Windows has no O_NOFOLLOW.
func createIn(dir, name string, perm fs.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(dir); err != nil {
		return nil, err
	} else if fi.Mode()&fs.ModeSymlink != 0 || fi.Mode()&fs.ModeIrregular != 0 {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: ErrSymlink}
	}
	return os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

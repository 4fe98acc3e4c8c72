// Package osfs is the operating-system layer of the JSONL store: the
// file-system operations it performs (FS, File), done the same safe way on
// every system (no symbolic link followed, no FIFO opened, cross-process
// locks without waiting), with one file per system for what differs.
package osfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/dshctl/dshctl/internal/durable"
)

// FS is every file-system operation the store performs. All access
// goes through it so that tests can count the bytes a read touches and make
// writes, syncs and truncations fail.
type FS interface {
	// OpenFile opens a store file as os.OpenFile does, but never through a
	// symbolic link, never blocking on a FIFO or a device, and only a
	// regular file: anything else fails with errNotRegular (or ErrSymlink).
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// CreateIn makes the new file name in the folder dir, open for
	// writing, following no symbolic link at dir or name (see
	// durable.CreateIn): a backup's folder that is a link is refused.
	CreateIn(dir, name string, perm fs.FileMode) (File, error)
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Mkdir(name string, perm fs.FileMode) error
	Link(oldname, newname string) error
	Rename(oldname, newname string) error
	Remove(name string) error
	// SyncDir makes the entries created or removed in a directory durable
	// (a no-op where the system journals them itself).
	SyncDir(name string) error
	// Lchown sets the owner of name, not following a symbolic link.
	Lchown(name string, uid, gid int) error
	// FreeSpace returns the bytes an unprivileged user may still write on
	// the file system holding dir; an error where it cannot tell.
	FreeSpace(dir string) (int64, error)
}

// File is an open file of an FS.
type File interface {
	io.ReaderAt
	io.Writer
	io.WriterAt
	Truncate(size int64) error
	Sync() error
	Stat() (fs.FileInfo, error)
	// TryLock takes the file's cross-process lock, exclusive or shared,
	// without waiting: ErrLockBusy when another process holds it.
	TryLock(exclusive bool) error
	Unlock() error
	// Chown and Chmod set the file's owner and mode, for rewritten and
	// created files to keep those of what they replace or live in.
	Chown(uid, gid int) error
	Chmod(mode fs.FileMode) error
	Close() error
}

var (
	// ErrLockBusy is TryLock's failure when another process holds the
	// lock.
	ErrLockBusy = errors.New("lock held by another process")
	// errNotRegular is an open of a store file that is not a regular file:
	// a FIFO would block a reader forever, a device is not a log.
	errNotRegular = errors.New("not a regular file")
	// ErrSymlink is an open, or a write in a folder, through a symbolic
	// link: the store's files and folders are never followed elsewhere.
	ErrSymlink = errors.New("a symbolic link, which dshctl does not follow in a store")
)

// OS is the real file system.
type OS struct{}

// OpenFile opens a store file (see FS): a bare descriptor for reading
// where the system allows it, an *os.File otherwise.
func (OS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag == os.O_RDONLY {
		return openReadOnly(name)
	}
	return openFile(name, flag, perm)
}

// CreateIn makes the new file name in the folder dir (see FS).
func (OS) CreateIn(dir, name string, perm fs.FileMode) (File, error) {
	f, err := durable.CreateIn(dir, name, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// Lstat is os.Lstat.
func (OS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// Stat is os.Stat.
func (OS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// ReadDir is os.ReadDir, without an *os.File on Linux.
func (OS) ReadDir(name string) ([]fs.DirEntry, error) { return readDir(name) }

// Mkdir is os.Mkdir.
func (OS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }

// Link is os.Link.
func (OS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

// Rename is os.Rename.
func (OS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// Remove is os.Remove.
func (OS) Remove(name string) error { return os.Remove(name) }

// SyncDir is durable.SyncDir.
func (OS) SyncDir(name string) error { return durable.SyncDir(name) }

// Lchown is os.Lchown.
func (OS) Lchown(name string, uid, gid int) error { return os.Lchown(name, uid, gid) }

// FreeSpace asks the system for the space left (see FS).
func (OS) FreeSpace(dir string) (int64, error) { return freeSpace(dir) }

// regularOnly checks that f, just opened as name, is a regular file, and
// closes it when it is not.
func regularOnly(name string, f interface {
	Stat() (fs.FileInfo, error)
	Close() error
}) error {
	fi, err := f.Stat()
	if err == nil {
		err = checkRegular(name, fi)
	}
	if err != nil {
		f.Close()
	}
	return err
}

// checkRegular fails unless fi, the state of the file just opened as name,
// is a regular file.
func checkRegular(name string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s)", errNotRegular, durable.TypeName(fi.Mode()))}
}

// SymlinkError reports name as a symbolic link the store will not follow.
func SymlinkError(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: ErrSymlink}
}

// ReadFullAt reads len(p) bytes at off; a short file is io.ErrUnexpectedEOF.
func ReadFullAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

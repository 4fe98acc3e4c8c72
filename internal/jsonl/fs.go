package jsonl

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileSystem is every file-system operation the store performs. All access
// goes through it so that tests can count the bytes a read touches and make
// writes, syncs and truncations fail.
type fileSystem interface {
	OpenFile(name string, flag int, perm fs.FileMode) (file, error)
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Mkdir(name string, perm fs.FileMode) error
	Link(oldname, newname string) error
	Rename(oldname, newname string) error
	Remove(name string) error
}

// file is an open file of a fileSystem.
type file interface {
	io.ReaderAt
	io.Writer
	Truncate(size int64) error
	Sync() error
	Stat() (fs.FileInfo, error)
	// Flock applies flock(2) operation how (unix.LOCK_EX|unix.LOCK_NB, ...).
	Flock(how int) error
	Close() error
}

// osFS is the real file system.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (file, error) {
	if flag == os.O_RDONLY {
		return openReadOnly(name)
	}
	f, err := os.OpenFile(name, flag|syscall.O_CLOEXEC, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Lstat(name string) (fs.FileInfo, error)     { return os.Lstat(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return readDir(name) }
func (osFS) Mkdir(name string, perm fs.FileMode) error  { return os.Mkdir(name, perm) }
func (osFS) Link(oldname, newname string) error         { return os.Link(oldname, newname) }
func (osFS) Rename(oldname, newname string) error       { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error                   { return os.Remove(name) }

type osFile struct{ *os.File }

func (f osFile) Flock(how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// readFullAt reads len(p) bytes at off; a short file is io.ErrUnexpectedEOF.
func readFullAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// syncDir fsyncs a directory so that a link or unlink in it is durable.
func syncDir(fsys fileSystem, dir string) error {
	d, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// Package durable holds the few file-system steps that make a write
// survive a crash or a power loss, shared by the stores and export:
// folders made with their entries synced into their parents, a folder's
// entries synced, a finished file published under its name without
// replacing one that appeared meanwhile, and a new file given the owner
// and mode of what it replaces. It knows nothing of any storage format.
package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FS is the part of a file system MkdirAll uses, so that a caller that
// routes its file operations through its own layer (for tests that fail
// or count them) keeps doing so. OS is the real one.
type FS interface {
	Stat(name string) (fs.FileInfo, error)
	Mkdir(name string, perm fs.FileMode) error
	SyncDir(name string) error
}

// OS is the operating system's file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Stat(name string) (fs.FileInfo, error)     { return os.Stat(name) }
func (osFS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }
func (osFS) SyncDir(name string) error                 { return SyncDir(name) }

// MkdirAll makes dir and the parents it lacks with mode perm, as
// os.MkdirAll does, and makes what it made durable: the parent of each
// folder it made is synced, so that after a power loss a file synced
// into dir cannot be unreachable because a new folder's entry was lost.
// A folder that exists is left as it is.
func MkdirAll(fsys FS, dir string, perm fs.FileMode) error {
	var made []string
	for d := dir; ; {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		made = append(made, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	// Outermost first; another process may make the same folders.
	for i := len(made) - 1; i >= 0; i-- {
		if err := fsys.Mkdir(made[i], perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	for _, d := range made {
		if parent := filepath.Dir(d); parent != d {
			if err := fsys.SyncDir(parent); err != nil {
				return fmt.Errorf("sync directory %s: %w", parent, err)
			}
		}
	}
	return nil
}

// Changer is a file whose mode and owner can be set.
type Changer interface {
	Chmod(mode fs.FileMode) error
	Chown(uid, gid int) error
}

// KeepOwner gives f, a new file that is to replace the file whose state
// is fi, that file's permission bits and, when the process may (root),
// its owner and group: a repair run as root must not take a file from its
// owner.
func KeepOwner(f Changer, fi fs.FileInfo) error {
	if err := f.Chmod(fi.Mode().Perm()); err != nil {
		return err
	}
	return GiveTo(f, fi)
}

// GiveTo gives f the owner and group of fi (a file it replaces, or the
// folder it is made in) when the process may and needs to: only root can
// give a file away, and anyone else makes files that are theirs already.
func GiveTo(f Changer, fi fs.FileInfo) error {
	if uid, gid, ok := Owner(fi); ok && CanChown() {
		return f.Chown(uid, gid)
	}
	return nil
}

// Publish gives the finished (synced and closed) temporary file tmp the
// name path. With replace it is renamed over whatever file path names.
// Without, a hard link publishes it, which fails with fs.ErrExist when path
// exists, so a file that appeared since the caller looked is never
// replaced; where the file system has no hard links it falls back to a
// check and a rename.
func Publish(tmp, path string, replace bool) error {
	if replace {
		return os.Rename(tmp, path)
	}
	err := os.Link(tmp, path)
	if err == nil {
		os.Remove(tmp)
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(path); serr == nil {
		return &fs.PathError{Op: "publish", Path: path, Err: fs.ErrExist}
	}
	return os.Rename(tmp, path)
}

// ErrSymlink is the failure of CreateIn in a folder that is a symbolic
// link.
var ErrSymlink = errors.New("a symbolic link, which is not followed")

// CreateIn makes the new file name (exclusive, with mode perm) in the
// folder dir and returns it open for writing. Neither dir's last element
// nor name is followed if it is a symbolic link (ErrSymlink, in a
// *fs.PathError): on Unix the folder is opened with O_NOFOLLOW and the file
// made relative to it, so a folder swapped for a link in between cannot
// send the file elsewhere. What leads to dir is followed.
func CreateIn(dir, name string, perm fs.FileMode) (*os.File, error) {
	return createIn(dir, name, perm)
}

// TypeName names the type of a file, for messages about a file that is
// not the regular file expected ("… is a FIFO").
func TypeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsRegular():
		return "a regular file"
	}
	return "of an unknown type"
}

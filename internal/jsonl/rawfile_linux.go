package jsonl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openReadOnly opens name for reading as a bare descriptor. An *os.File
// costs an extra system call per open on Linux (the runtime tries to add
// every opened file to its poller), and list opens thousands of logs. As
// openFile does, it refuses a symbolic link, does not block on a FIFO and
// accepts only a regular file.
func openReadOnly(name string) (file, error) {
	for {
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		if err == nil {
			f := &rawFile{name: name}
			f.fd.Store(int64(fd))
			if err := regularOnly(name, f); err != nil {
				return nil, err
			}
			return f, nil
		}
		if err != unix.EINTR {
			return nil, nofollowError(name, &fs.PathError{Op: "open", Path: name, Err: err})
		}
	}
}

// rawFile is a read-only file as a bare descriptor.
type rawFile struct {
	name string
	fd   atomic.Int64 // -1 once closed
}

func (f *rawFile) get(op string) (int, error) {
	fd := f.fd.Load()
	if fd < 0 {
		return -1, &fs.PathError{Op: op, Path: f.name, Err: os.ErrClosed}
	}
	return int(fd), nil
}

func (f *rawFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: errors.New("negative offset")}
	}
	fd, err := f.get("read")
	if err != nil {
		return 0, err
	}
	n := 0
	for n < len(p) {
		m, err := unix.Pread(fd, p[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: f.name, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f *rawFile) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: f.name, Err: syscall.EBADF}
}

func (f *rawFile) WriteAt([]byte, int64) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: f.name, Err: syscall.EBADF}
}

func (f *rawFile) Truncate(int64) error {
	return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EBADF}
}

func (f *rawFile) Sync() error {
	fd, err := f.get("sync")
	if err != nil {
		return err
	}
	for {
		err := unix.Fsync(fd)
		if err != unix.EINTR {
			if err != nil {
				return &fs.PathError{Op: "sync", Path: f.name, Err: err}
			}
			return nil
		}
	}
}

func (f *rawFile) TryLock(exclusive bool) error {
	fd, err := f.get("flock")
	if err != nil {
		return err
	}
	return flock(fd, lockHow(exclusive))
}

func (f *rawFile) Unlock() error {
	fd, err := f.get("flock")
	if err != nil {
		return err
	}
	return flock(fd, unix.LOCK_UN)
}

func (f *rawFile) Chown(uid, gid int) error {
	fd, err := f.get("chown")
	if err != nil {
		return err
	}
	if err := unix.Fchown(fd, uid, gid); err != nil {
		return &fs.PathError{Op: "chown", Path: f.name, Err: err}
	}
	return nil
}

func (f *rawFile) Chmod(mode fs.FileMode) error {
	fd, err := f.get("chmod")
	if err != nil {
		return err
	}
	if err := unix.Fchmod(fd, uint32(mode.Perm())); err != nil {
		return &fs.PathError{Op: "chmod", Path: f.name, Err: err}
	}
	return nil
}

func (f *rawFile) Stat() (fs.FileInfo, error) {
	fd, err := f.get("stat")
	if err != nil {
		return nil, err
	}
	fi := &rawInfo{name: f.name}
	for {
		err := syscall.Fstat(fd, &fi.st)
		if err == nil {
			return fi, nil
		}
		if err != syscall.EINTR {
			return nil, &fs.PathError{Op: "stat", Path: f.name, Err: err}
		}
	}
}

func (f *rawFile) Close() error {
	fd := f.fd.Swap(-1)
	if fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	}
	// close(2) is not retried on EINTR: the descriptor is gone either way.
	if err := unix.Close(int(fd)); err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// rawInfo is the fs.FileInfo of a rawFile; Sys is the *syscall.Stat_t.
type rawInfo struct {
	name string
	st   syscall.Stat_t
}

func (fi *rawInfo) Name() string       { return fi.name }
func (fi *rawInfo) Size() int64        { return fi.st.Size }
func (fi *rawInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *rawInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *rawInfo) Sys() any           { return &fi.st }

func (fi *rawInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode&0o777) | typeBits(fi.st.Mode)
	if fi.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// typeBits is the fs.FileMode type of a stat mode.
func typeBits(mode uint32) fs.FileMode {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}

// direntBufs recycles readDir's getdents buffers.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// readDir is os.ReadDir without an *os.File: list reads one folder per
// session, and an *os.File costs allocations, a finalizer and a poller
// registration attempt each. Entries are sorted by name, as os.ReadDir's.
func readDir(name string) ([]fs.DirEntry, error) {
	fd, err := openDir(name)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	var out []fs.DirEntry
	for {
		n, err := unix.Getdents(fd, *bp)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: name, Err: err}
		}
		if n <= 0 {
			break
		}
		if out, err = appendDirents(out, fd, name, (*bp)[:n]); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

func openDir(name string) (int, error) {
	for {
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			return fd, nil
		}
		if err != unix.EINTR {
			return -1, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// appendDirents appends the entries of buf, linux_dirent64 records read
// from the folder fd (named dir), but for "." and "..".
func appendDirents(out []fs.DirEntry, fd int, dir string, buf []byte) ([]fs.DirEntry, error) {
	const nameOff = 19 // d_ino (8), d_off (8), d_reclen (2), d_type (1)
	var slab []dirent
	for len(buf) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(buf[16:]))
		if reclen < nameOff || reclen > len(buf) {
			return out, &fs.PathError{Op: "readdirent", Path: dir, Err: syscall.EIO}
		}
		rec := buf[nameOff:reclen]
		typ := buf[18]
		buf = buf[reclen:]
		if i := bytes.IndexByte(rec, 0); i >= 0 {
			rec = rec[:i]
		}
		if name := string(rec); name != "." && name != ".." {
			mode, err := direntMode(fd, dir, name, typ)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed since getdents, as os.ReadDir skips it
				}
				return out, err
			}
			if len(slab) == 0 {
				// One allocation for the entries left in buf, at most.
				slab = make([]dirent, min(16, 1+len(buf)/24))
			}
			slab[0] = dirent{dir: dir, name: name, mode: mode}
			out, slab = append(out, &slab[0]), slab[1:]
		}
	}
	return out, nil
}

// direntMode is the type of entry name of folder fd, from its d_type or,
// where the file system does not fill that in, from lstat.
func direntMode(fd int, dir, name string, typ uint8) (fs.FileMode, error) {
	switch typ {
	case unix.DT_REG:
		return 0, nil
	case unix.DT_DIR:
		return fs.ModeDir, nil
	case unix.DT_LNK:
		return fs.ModeSymlink, nil
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, nil
	case unix.DT_SOCK:
		return fs.ModeSocket, nil
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, nil
	case unix.DT_BLK:
		return fs.ModeDevice, nil
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == nil {
			return typeBits(st.Mode), nil
		}
		if err != syscall.EINTR {
			return 0, &fs.PathError{Op: "lstat", Path: filepath.Join(dir, name), Err: err}
		}
	}
}

// dirent is an fs.DirEntry of readDir.
type dirent struct {
	dir, name string
	mode      fs.FileMode // type bits only
}

func (d *dirent) Name() string               { return d.name }
func (d *dirent) IsDir() bool                { return d.mode.IsDir() }
func (d *dirent) Type() fs.FileMode          { return d.mode }
func (d *dirent) Info() (fs.FileInfo, error) { return os.Lstat(filepath.Join(d.dir, d.name)) }
func (d *dirent) String() string             { return fs.FormatDirEntry(d) }

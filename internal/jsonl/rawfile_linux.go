package jsonl

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openReadOnly opens name for reading as a bare descriptor. An *os.File
// costs an extra system call per open on Linux (the runtime tries to add
// every opened file to its poller), and list opens thousands of logs.
func openReadOnly(name string) (file, error) {
	for {
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			f := &rawFile{name: name}
			f.fd.Store(int64(fd))
			return f, nil
		}
		if err != unix.EINTR {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
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

func (f *rawFile) Flock(how int) error {
	fd, err := f.get("flock")
	if err != nil {
		return err
	}
	for {
		err := unix.Flock(fd, how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
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
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	}
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

package osfs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ProcLocksHeld looks for a flock on the file fi in /proc/locks; ok is
// false when the table cannot be read.
func ProcLocksHeld(fi fs.FileInfo) (held, ok bool) {
	_, held, ok = ProcLockHolder(fi)
	return held, ok
}

// ProcLockHolder is ProcLocksHeld, also returning the pid /proc/locks
// gives for the holder (0 when it shows none, as across pid namespaces).
func ProcLockHolder(fi fs.FileInfo) (pid int, held, ok bool) {
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, false, false
	}
	dev, ino, _ := Identity(fi)
	want := []byte(fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino))
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		// "1: FLOCK ADVISORY WRITE <pid> <maj:min:ino> 0 EOF"; waiters
		// have "->" after the index.
		if len(f) < 6 || bytes.Equal(f[1], []byte("->")) || !bytes.Equal(f[1], []byte("FLOCK")) {
			continue
		}
		if bytes.Equal(f[5], want) {
			pid, _ = strconv.Atoi(string(f[4]))
			return max(pid, 0), true, true
		}
	}
	return 0, false, true
}

// openReadOnly opens name for reading as a bare descriptor. An *os.File
// costs an extra system call per open on Linux (the runtime tries to add
// every opened file to its poller), and list opens thousands of logs. As
// openFile does, it refuses a symbolic link, does not block on a FIFO and
// accepts only a regular file.
func openReadOnly(name string) (File, error) {
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

// errNoKernelCopy: copyKernel could not copy (a file that is not the
// system's, a destination opened O_APPEND, a file system without
// copy_file_range(2)); the bytes it did copy are in place.
var errNoKernelCopy = errors.New("no kernel copy")

// kernelCopyChunk is the most one copy_file_range(2) call copies, so that
// a cancelled repair of a GB tail stops within milliseconds.
const kernelCopyChunk = 16 << 20

// copyKernel copies [from, to) of src to dst, at dst's offset, with
// copy_file_range(2): no byte passes through this process (a backup of a
// 500 MB torn tail costs one copy in the kernel, not two and a buffer's
// worth of system calls), and a file system that shares extents (Btrfs,
// XFS) does not copy them at all. A hole in src (a log extended by a
// crash and never written) stays a hole in dst: it reads as the same zero
// bytes and costs neither time nor disk. It returns how many bytes of
// [from, to) are in place, with errNoKernelCopy when a buffer is to copy
// the rest.
func copyKernel(ctx context.Context, dst, src File, from, to int64) (int64, error) {
	d, dok := dst.(osFile)
	s, sok := src.(osFile)
	if !dok || !sok {
		return 0, errNoKernelCopy
	}
	dc, err := d.SyscallConn()
	if err != nil {
		return 0, errNoKernelCopy
	}
	sc, err := s.SyscallConn()
	if err != nil {
		return 0, errNoKernelCopy
	}
	done, cerr := int64(0), errNoKernelCopy
	err = sc.Control(func(sfd uintptr) {
		err := dc.Control(func(dfd uintptr) {
			done, cerr = copyFDs(ctx, int(dfd), int(sfd), from, to)
		})
		if err != nil {
			cerr = errNoKernelCopy
		}
	})
	if err != nil {
		return 0, errNoKernelCopy
	}
	return done, cerr
}

// copyFDs is copyKernel on descriptors. It moves src's offset to find its
// holes and puts it back: no reader of a log uses it (reads are pread(2),
// writes O_APPEND), but a descriptor is left as it was found.
func copyFDs(ctx context.Context, dfd, sfd int, from, to int64) (int64, error) {
	if flags, err := unix.FcntlInt(uintptr(dfd), unix.F_GETFL, 0); err != nil || flags&unix.O_APPEND != 0 {
		return 0, errNoKernelCopy // copy_file_range(2) refuses an O_APPEND destination
	}
	start, err := unix.Seek(dfd, 0, io.SeekCurrent)
	if err != nil {
		return 0, errNoKernelCopy
	}
	var st unix.Stat_t
	if err := unix.Fstat(sfd, &st); err != nil {
		return 0, &os.SyscallError{Syscall: "fstat", Err: err}
	}
	if st.Size < to {
		// Where a read would come short; a hole past the end is no hole.
		return 0, io.ErrUnexpectedEOF
	}
	if pos, err := unix.Seek(sfd, 0, io.SeekCurrent); err == nil {
		defer unix.Seek(sfd, pos, io.SeekStart)
	}
	off, copied := from, false
	// place ends the copy at off: dst's offset goes past what is in place
	// (and a hole at the end is made part of dst).
	place := func(err error) (int64, error) {
		end := start + off - from
		var dt unix.Stat_t
		if ferr := unix.Fstat(dfd, &dt); ferr != nil {
			return off - from, &os.SyscallError{Syscall: "fstat", Err: ferr}
		}
		if dt.Size < end && err == nil {
			if terr := unix.Ftruncate(dfd, end); terr != nil {
				return off - from, &os.SyscallError{Syscall: "ftruncate", Err: terr}
			}
		}
		if _, serr := unix.Seek(dfd, end, io.SeekStart); serr != nil && err == nil {
			err = &os.SyscallError{Syscall: "lseek", Err: serr}
		}
		return off - from, err
	}
	for off < to {
		data, err := unix.Seek(sfd, off, unix.SEEK_DATA)
		switch {
		case err == unix.ENXIO:
			data = to // a hole up to the end of the file
		case err != nil:
			data = off // no SEEK_DATA here: all of it is data
		}
		if data >= to {
			off = to
			break
		}
		off = data
		hole, err := unix.Seek(sfd, off, unix.SEEK_HOLE)
		if err != nil {
			hole = to
		}
		for hole = min(hole, to); off < hole; {
			if err := ctx.Err(); err != nil {
				return place(err)
			}
			roff, woff := off, start+off-from
			n, err := unix.CopyFileRange(sfd, &roff, dfd, &woff, int(min(hole-off, kernelCopyChunk)), 0)
			switch {
			case err == unix.EINTR:
				continue
			case !copied && (n == 0 && err == nil || isNoKernelCopy(err)):
				// Before Linux 5.19 some file systems report a copy of
				// nothing instead of failing.
				return place(errNoKernelCopy)
			case err != nil:
				return place(&os.SyscallError{Syscall: "copy_file_range", Err: err})
			case n == 0:
				return place(io.ErrUnexpectedEOF)
			}
			copied = true
			off += int64(n)
		}
	}
	return place(nil)
}

// isNoKernelCopy tells the failures of copy_file_range(2) that mean it
// cannot copy between these files (not there, another file system before
// Linux 5.3, a pipe, CIFS, NFS, a container that forbids it) from those
// of the copy itself.
func isNoKernelCopy(err error) bool {
	switch err {
	case unix.ENOSYS, unix.EXDEV, unix.EINVAL, unix.EIO, unix.EOPNOTSUPP, unix.EPERM:
		return true
	}
	return false
}

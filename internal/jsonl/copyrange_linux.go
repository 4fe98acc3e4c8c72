package jsonl

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

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
func copyKernel(ctx context.Context, dst, src file, from, to int64) (int64, error) {
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

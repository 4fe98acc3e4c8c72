//go:build darwin || freebsd || netbsd

package osfs

import (
	"io/fs"
	"syscall"
)

// Identity returns the device, inode and change time of fi.
func Identity(fi fs.FileInfo) (dev, ino uint64, ctimeNs int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fi.ModTime().UnixNano()
	}
	return uint64(st.Dev), uint64(st.Ino), st.Ctimespec.Nano()
}

// Links returns the link count of fi; 0 means the file was unlinked
// (or renamed over) after it was opened. Without it, Links says 1.
func Links(fi fs.FileInfo) uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 1
	}
	return uint64(st.Nlink)
}

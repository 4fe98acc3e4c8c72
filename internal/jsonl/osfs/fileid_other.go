//go:build !linux && !openbsd && !dragonfly && !solaris && !illumos && !darwin && !freebsd && !netbsd

package osfs

import "io/fs"

// Identity is the portable fallback: without a device and inode (an
// fs.FileInfo of Windows carries neither), a revision is the size and the
// modification time, and the change time is the modification time.
func Identity(fi fs.FileInfo) (dev, ino uint64, ctimeNs int64) {
	return 0, 0, fi.ModTime().UnixNano()
}

// Links is the portable fallback: a replaced log is not detected by
// its link count (on Windows a log open for reading cannot be replaced).
func Links(fs.FileInfo) uint64 { return 1 }

//go:build unix

package durable

import (
	"io/fs"
	"os"
	"syscall"
)

// SyncDir fsyncs the folder dir, so that the entries created or removed
// in it survive a power loss.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Owner returns the owner and group of fi.
func Owner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// CanChown reports whether the process may give a file to another owner.
func CanChown() bool { return os.Geteuid() == 0 }

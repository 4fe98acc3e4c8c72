//go:build !unix

package durable

import "io/fs"

// SyncDir does nothing: Windows cannot open a folder to flush it, and NTFS
// journals the entries of folders itself.
func SyncDir(string) error { return nil }

// Owner reports no owner: there is none that Chown could keep.
func Owner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// CanChown reports false: files have no Unix owner to give.
func CanChown() bool { return false }

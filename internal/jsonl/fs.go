package jsonl

import (
	"fmt"

	"github.com/dshctl/dshctl/internal/jsonl/osfs"
)

// fileSystem is every file-system operation the store performs (osfs.FS).
// All access goes through it so that tests can count the bytes a read
// touches and make writes, syncs and truncations fail.
type fileSystem = osfs.FS

// file is an open file of a fileSystem.
type file = osfs.File

var (
	// ErrSymlink is an open, or a write in a folder, through a symbolic
	// link: the store's files and folders are never followed elsewhere.
	ErrSymlink = osfs.ErrSymlink
	// errLockBusy is TryLock's failure when another process holds the
	// lock.
	errLockBusy = osfs.ErrLockBusy
)

// syncDir fsyncs a directory so that a link or unlink in it is durable.
func syncDir(fsys fileSystem, dir string) error {
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

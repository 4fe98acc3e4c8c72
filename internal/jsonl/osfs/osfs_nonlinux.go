//go:build !linux

package osfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
)

// ProcLocksHeld has no lock table to read outside Linux: jsonl's WriterActive
// probes with a shared lock instead.
func ProcLocksHeld(fs.FileInfo) (held, ok bool) { return false, false }

// ProcLockHolder has no lock table to name the holder from.
func ProcLockHolder(fs.FileInfo) (pid int, held, ok bool) { return 0, false, false }

// openReadOnly opens name for reading, as openFile does (Linux opens a
// bare descriptor: osfs_linux.go).
func openReadOnly(name string) (File, error) { return openFile(name, os.O_RDONLY, 0) }

// readDir reads a folder, sorted by name.
func readDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// errNoKernelCopy: copyKernel copied nothing, for CopyRange to copy the
// rest through a buffer.
var errNoKernelCopy = errors.New("no kernel copy")

// copyKernel copies nothing here: CopyRange's buffer does it all.
func copyKernel(context.Context, File, File, int64, int64) (int64, error) {
	return 0, errNoKernelCopy
}

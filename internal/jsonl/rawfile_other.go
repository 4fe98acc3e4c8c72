//go:build !linux

package jsonl

import (
	"io/fs"
	"os"
	"syscall"
)

// openReadOnly opens name for reading.
func openReadOnly(name string) (file, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// readDir reads a folder, sorted by name.
func readDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

//go:build !linux

package jsonl

import (
	"io/fs"
	"os"
)

// openReadOnly opens name for reading, as openFile does (Linux opens a
// bare descriptor: rawfile_linux.go).
func openReadOnly(name string) (file, error) { return openFile(name, os.O_RDONLY, 0) }

// readDir reads a folder, sorted by name.
func readDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

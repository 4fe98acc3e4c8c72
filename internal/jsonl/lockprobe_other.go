//go:build !linux

package jsonl

import "io/fs"

// procLocksHeld has no lock table to read outside Linux: WriterActive
// probes with a shared lock instead.
func procLocksHeld(fs.FileInfo) (held, ok bool) { return false, false }

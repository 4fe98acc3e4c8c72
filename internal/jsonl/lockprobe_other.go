//go:build !linux

package jsonl

import "io/fs"

// procLocksHeld has no lock table to read outside Linux: WriterActive
// probes with a shared lock instead.
func procLocksHeld(fs.FileInfo) (held, ok bool) { return false, false }

// procLockHolder has no lock table to name the holder from.
func procLockHolder(fs.FileInfo) (pid int, held, ok bool) { return 0, false, false }

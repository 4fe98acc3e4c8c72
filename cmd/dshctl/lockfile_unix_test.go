//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes the write lock dsh and dshctl take on session.lock.
func lockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }

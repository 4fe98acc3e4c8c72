//go:build unix && !linux

package sqlite

import "golang.org/x/sys/unix"

// POSIX record locks belong to the process; the registry keeps the one
// descriptor of the lock file open while the process holds a lock in it.
const (
	setLock = unix.F_SETLK
	getLock = unix.F_GETLK
)

package sqlite

import "golang.org/x/sys/unix"

// Linux has open file description locks: owned by the descriptor, not the
// process, so no close elsewhere in the process drops them.
const (
	setLock = unix.F_OFD_SETLK
	getLock = unix.F_OFD_GETLK
)

//go:build unix

package export

import (
	"errors"
	"syscall"
)

// streamFlags open a FIFO without waiting for its reader: the open fails
// (ENXIO) until there is one.
const streamFlags = syscall.O_NONBLOCK

func noReader(err error) bool { return errors.Is(err, syscall.ENXIO) }

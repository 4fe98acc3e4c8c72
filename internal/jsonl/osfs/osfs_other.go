//go:build !unix && !windows

package osfs

import (
	"errors"
)

// The portable fallback, for systems without flock or LockFileEx: reads
// work; writes fail, since without a cross-process lock a write could
// interleave with dsh's.

var errNoLocks = errors.New("cross-process file locks are not supported on this system")

func (osFile) TryLock(bool) error { return errNoLocks }
func (osFile) Unlock() error      { return errNoLocks }

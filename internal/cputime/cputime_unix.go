//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Now is the CPU time the process has used so far, user and system.
func Now() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return wall()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:build unix

package zstdframe

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, user and system: unlike
// wall time, it does not grow when a loaded machine makes a test wait.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

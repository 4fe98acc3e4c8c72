//go:build unix

package reconcile

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time this process has used: on a machine shared
// with other work, throughput per CPU second is what a benchmark can measure.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

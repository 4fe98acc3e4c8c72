//go:build unix

package sqlite

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time this process and its waited-for children
// have used: on a machine shared with other work, CPU time is what a
// benchmark can compare.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return 0
	}
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}

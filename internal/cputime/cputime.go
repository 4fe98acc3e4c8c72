// Package cputime measures the CPU time of the process, for tests that
// bound the work an operation does: unlike wall time, it does not grow
// when a loaded machine makes the test wait. Where the process's CPU time
// cannot be had, it falls back to wall time since the process started.
package cputime

import "time"

var start = time.Now()

func wall() time.Duration { return time.Since(start) }

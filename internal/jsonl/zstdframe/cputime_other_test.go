//go:build !unix

package zstdframe

import "time"

var processStart = time.Now()

// cpuTime is wall time where the process's CPU time is not at hand.
func cpuTime() time.Duration { return time.Since(processStart) }

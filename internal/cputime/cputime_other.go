//go:build !unix

package cputime

import "time"

// Now is the wall time since the process started: the CPU time of the
// process is not at hand here.
func Now() time.Duration { return wall() }

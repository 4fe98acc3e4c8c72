//go:build !unix

package sqlite

import "time"

// cpuTime is not measured here; benchmarks report wall-clock figures only.
func cpuTime() time.Duration { return 0 }

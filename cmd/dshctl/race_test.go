//go:build race

package main

// raceEnabled says the tests run under the race detector, which builds
// dshctl itself (the test binary stands in for it) with it: its code runs
// several times slower and its memory grows several times over, so the
// catalogue's bounds of CPU time and peak memory are scaled (raceCPU,
// raceMem) rather than broken.
const raceEnabled = true

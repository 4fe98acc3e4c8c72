//go:build race

package jsonl

// raceEnabled skips the I/O-bound 100 MB tests, which the race detector
// slows twentyfold without checking anything more.
const raceEnabled = true

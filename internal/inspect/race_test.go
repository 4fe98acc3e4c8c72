//go:build race

package inspect

// raceEnabled scales the bounds of time tests: the race detector makes
// the code it instruments several times slower.
const raceEnabled = true

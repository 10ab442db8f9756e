//go:build race

package tuner

// raceEnabled shortens the long tests under the race detector, which runs
// the kernels 5-20x slower.
const raceEnabled = true

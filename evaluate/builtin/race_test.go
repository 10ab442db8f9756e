//go:build race

package builtin

// raceEnabled reports whether the race detector is on: it slows the kernels'
// loops tens of times, so the 2^24-element tests skip under it.
const raceEnabled = true

//go:build !race

package builtin

// raceEnabled reports whether the race detector is on.
const raceEnabled = false

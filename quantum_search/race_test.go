//go:build race

package quantumsearch

const raceEnabled = true

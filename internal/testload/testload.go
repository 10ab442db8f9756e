package testload

import (
	goruntime "runtime"
	"sync"
	"syscall"
	"time"
)

// maxFactor bounds Factor: past it a test is better slow than stuck.
const maxFactor = 20

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

// Factor is how many times longer than its CPU time a fixed CPU-bound
// loop took on one thread, measured once per process (at least 1, at most
// 20): about 1 on an idle machine, 1.5 with two busy loops on two cores,
// more under heavier load.
var Factor = sync.OnceValue(measure)

// Scale returns d times Factor.
func Scale(d time.Duration) time.Duration { return time.Duration(float64(d) * Factor()) }

func measure() float64 {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(rusageThread, &ru); err != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0, w0 := cpu(), time.Now()
	x := uint64(1)
	for cpu()-c0 < 50*time.Millisecond {
		for range 100000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	used, wall := cpu()-c0, time.Since(w0)
	sink = x
	if used <= 0 {
		return 1
	}
	return min(max(float64(wall)/float64(used), 1), maxFactor)
}

var sink uint64

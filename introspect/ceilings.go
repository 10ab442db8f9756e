package introspect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Ceilings are a roofline's roofs, measured on this machine: the float32
// FMA rate and the streaming copy bandwidth, each with every thread busy.
type Ceilings struct {
	GFLOPS       float64 `json:"gflops"`        // float32 flops per ns, all threads (an FMA is 2 flops)
	GFLOPSThread float64 `json:"gflops_thread"` // the same on one thread alone (a single-threaded kernel's roof)
	BandwidthGBs float64 `json:"bandwidth_gbs"` // bytes copied (read + written) per ns, all threads
	Threads      int     `json:"threads"`
	// Levels are the copy bandwidths of buffers that fit each cache level
	// of CeilingOptions.Caches, smallest first; empty without caches.
	Levels []LevelCeiling `json:"levels,omitempty"`
	FMA    string         `json:"fma"` // the FMA loop that ran
	How    string         `json:"how"` // how both were measured
	TookMS float64        `json:"took_ms"`
}

// LevelCeiling is the streaming copy bandwidth, every thread busy, of
// buffers that fit one cache level.
type LevelCeiling struct {
	Name         string  `json:"name"`         // "L1"
	Bytes        int64   `json:"bytes"`        // the level's size (one instance)
	BufferBytes  int     `json:"buffer_bytes"` // each thread's source (and destination) buffer
	BandwidthGBs float64 `json:"bandwidth_gbs"`
}

// CeilingOptions bounds a measurement.
type CeilingOptions struct {
	Threads int           // goroutines; 0: Threads of the CPU given to MeasureCeilings
	Time    time.Duration // per ceiling and repetition; 0: 100 ms
	Reps    int           // repetitions, best kept; 0: 3
	// CopyBytes is each thread's buffer (source and destination each); 0:
	// 64 MiB, twice a large L3, so the copy streams from memory.
	CopyBytes int
	// Caches are the cache levels to measure a copy bandwidth for
	// (ReadCaches); none: only the memory's.
	Caches []Cache
	Now    func() time.Time
}

// MeasureCeilings runs a short FMA loop and a streaming copy on every
// thread and keeps the best of a few repetitions of each: the roofs a
// kernel's achieved rate is set under. The FMA loop is the widest vector
// form this CPU runs (12 independent accumulators, enough to cover the FMA
// latency on two pipes), so it is the float32 FMA peak; the copy is Go's
// copy of buffers larger than the caches, counting the bytes read and
// written, as STREAM's Copy does (a write-allocate's extra read is not
// counted). Other load on the machine lowers both.
func MeasureCeilings(ctx context.Context, opt CeilingOptions) (Ceilings, error) {
	if opt.Threads <= 0 {
		return Ceilings{}, errors.New("ceilings: no threads")
	}
	if opt.Time <= 0 {
		opt.Time = 100 * time.Millisecond
	}
	if opt.Reps <= 0 {
		opt.Reps = 3
	}
	if opt.CopyBytes <= 0 {
		opt.CopyBytes = 64 << 20
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	name, perIter, loop := fmaKernel()
	c := Ceilings{Threads: opt.Threads, FMA: name}

	// Calibrate the FMA loop's iterations to about opt.Time on one thread.
	iters := int64(1 << 16)
	for {
		t0 := now()
		loop(iters)
		if d := now().Sub(t0); d >= opt.Time/8 || iters > 1<<40 {
			iters = int64(float64(iters) * float64(opt.Time) / float64(max(d, time.Microsecond)))
			break
		}
		iters *= 4
	}
	iters = max(iters, 1)
	bufs := make([][2][]byte, opt.Threads)
	for i := range bufs {
		bufs[i] = [2][]byte{make([]byte, opt.CopyBytes), make([]byte, opt.CopyBytes)}
		for j := range bufs[i][0] { // touch every page: no first-touch faults in the timed copies
			bufs[i][0][j] = byte(j)
		}
		copy(bufs[i][1], bufs[i][0])
	}
	for range opt.Reps {
		if err := ctx.Err(); err != nil {
			return c, fmt.Errorf("ceilings: %w", err)
		}
		d := parallelTime(opt.Threads, now, func(int) { loop(iters) })
		c.GFLOPS = math.Max(c.GFLOPS, float64(opt.Threads)*float64(iters)*perIter/float64(d.Nanoseconds()))
		d = parallelTime(1, now, func(int) { loop(iters) })
		c.GFLOPSThread = math.Max(c.GFLOPSThread, float64(iters)*perIter/float64(d.Nanoseconds()))

		// Copies until opt.Time has passed on each thread.

		var mu sync.Mutex
		var total int64
		d = parallelTime(opt.Threads, now, func(w int) {
			b := bufs[w]
			t0 := now()
			n := int64(0)
			for now().Sub(t0) < opt.Time {
				copy(b[1], b[0])
				n += 2 * int64(len(b[0]))
			}

			mu.Lock()
			total += n
			mu.Unlock()
		})
		c.BandwidthGBs = math.Max(c.BandwidthGBs, float64(total)/float64(d.Nanoseconds()))
	}
	for _, l := range levelBuffers(opt.Caches, opt.Threads, opt.CopyBytes) {
		for range opt.Reps {
			if err := ctx.Err(); err != nil {
				return c, fmt.Errorf("ceilings: %w", err)
			}
			l.BandwidthGBs = max(l.BandwidthGBs, copyRate(bufs, l.BufferBytes, opt.Time, now))
		}
		c.Levels = append(c.Levels, l)
	}
	c.How = fmt.Sprintf("best of %d: %s loop, %d iterations per thread; copy of %d MiB buffers for %v per thread; %d threads",
		opt.Reps, name, iters, opt.CopyBytes>>20, opt.Time, opt.Threads)
	for _, l := range c.Levels {
		c.How += fmt.Sprintf("; %s: copy of %d KiB buffers", l.Name, l.BufferBytes>>10)
	}
	c.TookMS = float64(now().Sub(start).Microseconds()) / 1000
	return c, nil
}

// levelBuffers sizes each cache level's copy: every thread copies a
// source to a destination that together take half of its share of the
// level (the level's size over the busy threads that share one instance),
// so both stay in it with room for the rest; never more than copyBytes.
func levelBuffers(caches []Cache, threads, copyBytes int) []LevelCeiling {
	var out []LevelCeiling
	for _, c := range caches {
		share := int64(max(1, min(c.SharedBy, threads)))
		per := min(int(c.Bytes/share/4), copyBytes) &^ 63
		if per < 1<<10 {
			continue
		}
		out = append(out, LevelCeiling{Name: c.Name, Bytes: c.Bytes, BufferBytes: per})
	}
	return out
}

// copyRate copies the first per bytes of each thread's source buffer to
// its destination, on every thread at once, for d per thread, and
// returns the bytes read and written per ns. Small buffers are copied in
// batches of about 1 MiB between clock reads, so reading the clock does
// not count against the copy.
func copyRate(bufs [][2][]byte, per int, d time.Duration, now func() time.Time) float64 {
	var mu sync.Mutex
	var total int64
	batch := max(1, (1<<20)/per)
	el := parallelTime(len(bufs), now, func(w int) {
		src, dst := bufs[w][0][:per], bufs[w][1][:per]
		t0 := now()
		n := int64(0)
		for now().Sub(t0) < d {
			for range batch {
				copy(dst, src)
			}
			n += 2 * int64(per) * int64(batch)
		}
		mu.Lock()
		total += n
		mu.Unlock()
	})
	return float64(total) / float64(el.Nanoseconds())
}

// parallelTime runs fn on n goroutines at once and returns the wall time
// from their common start to the last one's end.
func parallelTime(n int, now func() time.Time, fn func(w int)) time.Duration {
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(n)
	startGate := make(chan struct{})
	for w := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-startGate
			fn(w)
		}()
	}
	ready.Wait()
	t0 := now()
	close(startGate)
	done.Wait()
	return max(now().Sub(t0), time.Nanosecond)
}

// scalarKernel is the FMA loop without vectors: 12 float64 chains of
// math.FMA (2 flops each), for CPUs without a vector loop here.
func scalarKernel() (string, float64, func(int64) float32) {
	return "scalar float64 fma", 24, func(n int64) float32 {
		var a [12]float64
		x, y := 1.0000001, 0.9999999
		for range n {
			for j := range a {
				a[j] = math.FMA(x, y, a[j])
			}
		}
		s := 0.0
		for _, v := range a {
			s += v
		}
		return float32(s)
	}
}

package daemon

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/introspect"
)

// idleGate says when other work is using a device too much to tune on it.
// It samples the CPU load of processes outside quasimd's own tree once a
// second, so a cycle's question costs nothing; GPUs are asked through
// NVML when gpus is set.
type idleGate struct {
	cpuMax float64 // share of all CPUs; 0 turns the CPU gate off
	gpuMax float64 // percent utilisation; 0 turns the GPU gate off
	gpus   gpuUse
	fsys   fs.FS // the root of the file system, for /proc
	log    zerolog.Logger

	mu    sync.Mutex
	load  float64 // over the last window
	ready bool    // a window has been measured
	err   error   // why the load cannot be read
}

// gpuUse reports how much processes outside quasimd use the GPU of a
// device class: utilisation percent and the other processes' pids.
type gpuUse func(class string) (pct float64, others []uint32, ok bool)

// run samples until ctx is done. A read that fails turns the CPU gate
// off until one succeeds again.
func (g *idleGate) run(ctx context.Context, every time.Duration) {
	if g.cpuMax <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var prev introspect.CPUTimes
	have, warned := false, false
	for {
		cur, err := introspect.ReadCPUTimes(g.fsys, os.Getpid())
		g.mu.Lock()
		switch {
		case err != nil:
			g.err, have = err, false
			if !warned {
				g.log.Warn().Err(err).Msg("CPU load unreadable; cycles do not wait for an idle CPU until it is readable")
				warned = true
			}
		case have:
			g.load, g.ready, g.err = introspect.Load(prev, cur), true, nil
		}
		g.mu.Unlock()
		if err == nil {
			prev, have = cur, true
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prime measures a short first window, for a cycle that asks before the
// sampler's first one is done; it is called with g.mu held.
func (g *idleGate) prime() {
	a, err := introspect.ReadCPUTimes(g.fsys, os.Getpid())
	if err == nil {
		time.Sleep(250 * time.Millisecond)
		var b introspect.CPUTimes
		if b, err = introspect.ReadCPUTimes(g.fsys, os.Getpid()); err == nil {
			g.load, g.ready, g.err = introspect.Load(a, b), true, nil
		}
	}
	if err != nil {
		g.err = err
	}
}

// current is the last measured load; false before the first window or
// when the load cannot be read.
func (g *idleGate) current() (float64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.load, g.ready && g.err == nil
}

// busy is tuner.Config.Busy: why device is too busy now, or "".
func (g *idleGate) busy(device string) string {
	if strings.HasPrefix(device, "nvidia/") && g.gpuMax > 0 && g.gpus != nil {
		if pct, others, ok := g.gpus(device); ok && pct > g.gpuMax && len(others) > 0 {
			return fmt.Sprintf("GPU utilisation %.0f%% above %.0f%% with other processes on it (pids %v)", pct, g.gpuMax, others)
		}
	}
	if g.cpuMax <= 0 {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.ready && g.err == nil {
		g.prime()
	}
	if g.err == nil && g.load > g.cpuMax {
		return fmt.Sprintf("CPU load of other processes %.2f above %.2f", g.load, g.cpuMax)
	}
	return ""
}

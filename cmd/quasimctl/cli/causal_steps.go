package cli

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/quasim/quasim/causal"
)

// printSteps says how GPU work was bound to ProfilerStep#N steps and what
// the steps were: their median period, which were GPU-bound and what their
// blocked host calls took.
func printSteps(w io.Writer, r causal.ChromeReport) {
	if len(r.Steps) == 0 {
		return
	}
	if b := r.Bind; b != (causal.BindReport{}) {
		fmt.Fprintf(w, "GPU work in steps: %d events by their launch's correlation id (%d of them kernels of a CUDA graph launch), %d by when they ran on their stream (no launch in the trace), %d in no step\n",
			b.ByLaunch, b.GraphKernels, b.ByTime, b.Dropped)
	}
	var periods []int64
	bound, calls := 0, 0
	var callTime int64
	for _, s := range r.Steps {
		periods = append(periods, s.Period)
		if s.GPUBound {
			bound++
			calls += s.HostCalls
			callTime += s.HostCallTime
		}
	}
	slices.Sort(periods)
	med := periods[len(periods)/2]
	if len(periods)%2 == 0 {
		med = (periods[len(periods)/2-1] + med) / 2
	}
	fmt.Fprintf(w, "steps: %d, median period %s (a step's start to the next's; the last to its last GPU op)", len(r.Steps), time.Duration(med))
	if bound > 0 {
		fmt.Fprintf(w, "; %d GPU-bound (the host ran ahead, the GPU busy over %.0f%% of the step's GPU time): their host work is left out, "+
			"and their %d runtime calls (%s) waited for a full launch queue: no influence of their own", bound, 100*causal.GPUBoundBusy, calls, time.Duration(callTime))
	}
	fmt.Fprintln(w)
}

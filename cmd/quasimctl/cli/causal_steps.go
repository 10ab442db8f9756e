package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/quasim/quasim/api"
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
		fmt.Fprintf(w, "GPU work in steps: %d events by their launch's correlation id (%d of them kernels of a CUDA graph launch), ", b.ByLaunch, b.GraphKernels)
		if b.ByOrder > 0 {
			fmt.Fprintf(w, "%d by their correlation id's place between two launches of one step (no launch in the trace), ", b.ByOrder)
		}
		fmt.Fprintf(w, "%d by when they ran on their stream (no launch in the trace), %d in no step\n", b.ByTime, b.Dropped)
	}
	var periods, tails []int64
	bound, calls := 0, 0
	var callTime int64
	for _, s := range r.Steps {
		periods = append(periods, s.Period)
		if s.GPUBound {
			bound++
			calls += s.HostCalls
			callTime += s.HostCallTime
		}
		if end := s.Start + s.Period; !s.GPUBound && s.GPUBusy > 0 && s.GPUEnd < end {
			tails = append(tails, end-s.GPUEnd)
		}
	}
	fmt.Fprintf(w, "steps: %d, median period %s (a step's start to the next's; the last to its last GPU op)", len(r.Steps), medianDuration(periods))
	if bound > 0 {
		fmt.Fprintf(w, "; %d GPU-bound (the host ran ahead, the GPU busy over %.0f%% of the step's GPU time): their host work is left out, "+
			"and their %d runtime calls (%s) waited for a full launch queue: no influence of their own", bound, 100*causal.GPUBoundBusy, calls, time.Duration(callTime))
	}
	if len(tails) > 0 {
		// The host's end of the step is the critical path's; a path
		// that ends at the GPU's last op (HTA's, which weighs host time
		// between ops 0) differs by this.
		fmt.Fprintf(w, "; %d host-paced (their GPU work ended a median %s before the step did: the host ends them, "+
			"so their last GPU ops have that much slack; --end gpu measures to those ops)", len(tails), medianDuration(tails))
	}
	fmt.Fprintln(w)
}

// medianDuration is the median of v (not empty), which it sorts.
func medianDuration(v []int64) time.Duration {
	slices.Sort(v)
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + med) / 2
	}
	return time.Duration(med)
}

// minAttributed is the least share of the critical path in rows that
// passes without a warning.
const minAttributed = 0.9

// printCoverage says how much of the critical path the rows hold, and why
// the rows' shares may add past 100%: each track's busy share is at most
// 100%, tracks run at once.
func printCoverage(w io.Writer, c api.Causal) {
	if c.Iterations == 0 {
		return
	}
	fmt.Fprintf(w, "critical path in rows: %s of an iteration (median)", fmtPct(c.Attributed.Median))
	if c.Attributed.Median < minAttributed {
		fmt.Fprintf(w, "; warning: under %.0f%%, the rest is lag between spans (host work, launch latency, waits the trace shows no span for), which no row's influence covers",
			100*minAttributed)
	}
	fmt.Fprintln(w)
	sum := 0.0
	for _, k := range c.Kernels {
		sum += k.Share.Median
	}
	if sum <= 1 || len(c.Tracks) == 0 {
		return
	}
	top := slices.Clone(c.Tracks)
	slices.SortStableFunc(top, func(a, b api.CausalTrack) int { return cmp.Compare(b.Busy.Median, a.Busy.Median) })
	var parts []string
	for _, t := range top[:min(4, len(top))] {
		parts = append(parts, fmt.Sprintf("%s/%s %s", t.Device, t.Stream, fmtPct(t.Busy.Median)))
	}
	fmt.Fprintf(w, "the rows' shares add to %s: they are of %d streams and threads that run at once; each one's busy share is at most 100%% (%s)\n",
		fmtPct(sum), len(c.Tracks), strings.Join(parts, ", "))
}

package causal

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// GPUBoundBusy is the least share of a step's GPU window (its first GPU
// op's start to its last's end) its GPU work must keep busy for the step
// to be GPU-bound, when that work ends after the next step has started.
const GPUBoundBusy = 0.9

// StepReport is one ProfilerStep#N as the trace shows it.
type StepReport struct {
	N     int   `json:"n"`
	Start int64 `json:"start_ns"`
	// Period runs from the step's start to the next step's start; for the
	// last step, to the end of its last GPU op (or of its marker).
	Period int64 `json:"period_ns"`
	// GPUStart and GPUEnd bound the step's GPU work; GPUBusy is the time
	// some stream runs it (streams at once count once).
	GPUStart int64 `json:"gpu_start_ns,omitempty"`
	GPUEnd   int64 `json:"gpu_end_ns,omitempty"`
	GPUBusy  int64 `json:"gpu_busy_ns"`
	// GPUBound: the step's GPU work ended after the next step started
	// (the host ran ahead, so its launches waited for a full queue) and
	// kept the GPU busy GPUBoundBusy of its window. The step's host
	// spans are left out of its graph: its time is the GPU's.
	GPUBound bool `json:"gpu_bound"`
	// HostCalls and HostCallTime count the runtime calls of a GPU-bound
	// step (launches and the like) and their time: blocked by the queue,
	// not a cost of their own.
	HostCalls    int   `json:"host_calls,omitempty"`
	HostCallTime int64 `json:"host_call_ns,omitempty"`
}

// steps describes each step and leaves the host spans of GPU-bound ones
// out of the graph. Each other step gets boundaries (Span.Boundary) at its
// start and at the next step's start (the last: its marker's end) on a
// track of their own; the end depends on the host's last span on the
// marker's thread, so the iteration lasts its period, and host work that
// gets faster ends it sooner. It returns the end boundaries' edges.
func (im *importer) steps() []edge {
	type acc struct {
		rep      StepReport
		next     int64 // the next step's start; 0 for the last
		end      int64 // the marker's end
		pid, tid string
		last     *slice // the latest kept host span on the marker's thread
		spans    bool
		gpu      [][2]int64
	}
	var all []marker
	for _, ms := range im.markers {
		all = append(all, ms...)
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortFunc(all, func(a, b marker) int { return cmp.Compare(a.start, b.start) })
	by := map[int]*acc{}
	var order []*acc
	for k, m := range all {
		if by[m.n] != nil {
			continue // a number seen twice: the first marker's window
		}
		a := &acc{rep: StepReport{N: m.n, Start: m.start}, end: m.end, pid: m.pid, tid: m.tid}
		if k+1 < len(all) {
			a.next = all[k+1].start
		}
		by[m.n] = a
		order = append(order, a)
	}
	gpuStats := func() {
		for _, a := range order {
			a.gpu = a.gpu[:0]
		}
		for _, s := range im.slices {
			if a := by[s.iter]; a != nil && s.gpu && !s.dropped {
				a.gpu = append(a.gpu, [2]int64{s.start, s.end})
			}
		}
		for _, a := range order {
			r := &a.rep
			r.GPUStart, r.GPUEnd, r.GPUBusy = 0, 0, 0
			if len(a.gpu) > 0 {
				r.GPUStart, r.GPUEnd = a.gpu[0][0], a.gpu[0][1]
				for _, g := range a.gpu {
					r.GPUStart, r.GPUEnd = min(r.GPUStart, g[0]), max(r.GPUEnd, g[1])
				}
				r.GPUBusy = union(a.gpu)
			}
			r.Period = a.next - r.Start
			if a.next == 0 {
				r.Period = max(a.end, r.GPUEnd) - r.Start
			}
		}
	}
	gpuStats()
	for _, a := range order {
		r := &a.rep
		boundary := a.next
		if a.next == 0 {
			boundary = a.end
		}
		window := r.GPUEnd - r.GPUStart
		r.GPUBound = len(a.gpu) > 0 && r.GPUEnd > boundary && float64(r.GPUBusy) >= GPUBoundBusy*float64(window)
	}
	// GPU work a step launched that starts only after the next step began,
	// when the GPU did not bound the step, runs in a later step's time:
	// its host had moved on. It is that step's. So is a GPU-bound step's
	// work that starts once the later step's own GPU work has started
	// (the two run at once, on other streams): the later step's period
	// holds it, as in steady state each period holds the tail of the step
	// before. A GPU-bound step's work that the later step's waits behind
	// (one stream, in launch order) stays its own: its window is its
	// period. With ChromeOptions.ToGPUEnd nothing moves: that view asks
	// when the GPU work the step launched is done.
	global := windows(all)
	pre := map[int]StepReport{} // GPU windows by launch, before any move
	for _, a := range order {
		pre[a.rep.N] = a.rep
	}
	for _, s := range im.slices {
		a := by[s.iter]
		if a == nil || !s.gpu || s.dropped || a.next == 0 || s.start < a.next || im.opt.ToGPUEnd {
			continue
		}
		n := in(global, s.start)
		if n < 0 || n == s.iter {
			continue
		}
		if later := pre[n]; a.rep.GPUBound && (later.GPUEnd == 0 || s.start < later.GPUStart) {
			continue
		}
		s.iter = n
		im.rep.Bind.Later++
	}
	gpuStats()
	for _, s := range im.slices {
		a := by[s.iter]
		if a == nil || !a.rep.GPUBound || s.gpu || s.dropped {
			continue
		}
		if s.launch {
			a.rep.HostCalls++
			a.rep.HostCallTime += s.end - s.start
		}
		s.dropped = true
		im.drop(s.ev, "host work of a GPU-bound step: it ran ahead of the GPU, so the step's time is the GPU's")
	}
	var edges []edge
	next := uint64(len(im.slices))
	for _, s := range im.slices {
		if a := by[s.iter]; a != nil && !s.dropped {
			a.spans = true
			if !s.gpu && s.pid == a.pid && s.tid == a.tid && (a.last == nil || s.start >= a.last.start) {
				a.last = s
			}
		}
	}
	for _, a := range order {
		im.rep.Steps = append(im.rep.Steps, a.rep)
		if a.rep.GPUBound || !a.spans {
			continue
		}
		end := a.next
		if end == 0 {
			end = a.end
		}
		for _, t := range []int64{a.rep.Start, end} {
			next++
			b := &slice{ev: -1, name: fmt.Sprintf("ProfilerStep#%d", a.rep.N), pid: a.pid, tid: "ProfilerStep",
				start: t, end: t, iter: a.rep.N, id: next, boundary: true}
			im.slices = append(im.slices, b)
			if t == end && a.last != nil {
				edges = append(edges, edge{a.last, b})
			}
		}
	}
	return edges
}

// MinCoverage is the least share of the GPU busy time inside steps that
// should be in spans; below it ChromeReport.Warning says so.
const MinCoverage = 0.9

// Coverage is the GPU busy time (streams at once counted once) of every
// GPU event that starts inside a step's window, and of those kept as
// spans.
type Coverage struct {
	GPUInSteps int64 `json:"gpu_in_steps_ns"`
	GPUInRows  int64 `json:"gpu_in_rows_ns"`
}

// Share is GPUInRows over GPUInSteps (1 with no GPU work).
func (c Coverage) Share() float64 {
	if c.GPUInSteps == 0 {
		return 1
	}
	return float64(c.GPUInRows) / float64(c.GPUInSteps)
}

func (im *importer) coverage() {
	var first int64
	for _, ms := range im.markers {
		for _, m := range ms {
			if first == 0 || m.start < first {
				first = m.start
			}
		}
	}
	var in, kept [][2]int64
	for _, g := range im.gpuRaw {
		if g[0] >= first && g[0] < im.stepsEnd {
			in = append(in, g)
		}
	}
	for _, s := range im.slices {
		if s.gpu && !s.dropped {
			kept = append(kept, [2]int64{s.start, s.end})
		}
	}
	im.rep.Coverage = Coverage{union(in), union(kept)}
	if c := im.rep.Coverage; c.Share() < MinCoverage {
		im.rep.Warning = fmt.Sprintf("only %.1f%% of the GPU busy time inside the steps is in spans (%s of %s): see what was dropped",
			100*c.Share(), fmtNs(c.GPUInRows), fmtNs(c.GPUInSteps))
	}
}

func fmtNs(ns int64) string { return fmt.Sprintf("%.3f ms", float64(ns)/1e6) }

// whyEmpty says why nothing was mapped, and what to do.
func (im *importer) whyEmpty() string {
	var marked, work []string
	for pid := range im.markers {
		marked = append(marked, pid)
	}
	seen := map[string]bool{}
	for _, s := range im.all {
		if !s.gpu && im.markers[s.pid] == nil && !seen[s.pid] {
			seen[s.pid] = true
			work = append(work, s.pid)
		}
	}
	slices.Sort(marked)
	slices.Sort(work)
	switch {
	case len(marked) > 0 && len(work) > 0:
		return fmt.Sprintf("the ProfilerStep#N markers are on pid %s, but the host work is on pid %s, which no marker covers "+
			"(the profiler's step() ran in another process than the model, or two traces were merged): "+
			"record the trace in the process that runs the steps, or drop the markers to have iterations inferred",
			strings.Join(marked, ", "), strings.Join(work, ", "))
	case len(im.gpuRaw) == 0 && len(im.all) == 0:
		return "no GPU events (kernel, gpu_memcpy, gpu_memset) and no host events with a duration (X, or B with E): " +
			"nothing to profile; record with CUDA activities (torch.profiler.ProfilerActivity.CUDA)"
	case len(im.gpuRaw) == 0:
		return "no GPU events (kernel, gpu_memcpy, gpu_memset), and no host event inside a step: nothing to profile " +
			"(a CPU-only trace whose work lies outside its ProfilerStep#N or was dropped; see the report)"
	}
	return "no events could be mapped to spans (see what was dropped, and why)"
}

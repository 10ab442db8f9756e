package causal

import (
	"cmp"
	"slices"
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
// out of the graph.
func (im *importer) steps() {
	type acc struct {
		rep  StepReport
		next int64 // the next step's start; 0 for the last
		end  int64 // the marker's end
		gpu  [][2]int64
	}
	var all []marker
	for _, ms := range im.markers {
		all = append(all, ms...)
	}
	slices.SortFunc(all, func(a, b marker) int { return cmp.Compare(a.start, b.start) })
	by := map[int]*acc{}
	var order []*acc
	for k, m := range all {
		if by[m.n] != nil {
			continue // a number seen twice: the first marker's window
		}
		a := &acc{rep: StepReport{N: m.n, Start: m.start}, end: m.end}
		if k+1 < len(all) {
			a.next = all[k+1].start
		}
		by[m.n] = a
		order = append(order, a)
	}
	for _, s := range im.slices {
		if a := by[s.iter]; a != nil && s.gpu && !s.dropped {
			a.gpu = append(a.gpu, [2]int64{s.start, s.end})
		}
	}
	for _, a := range order {
		r := &a.rep
		if len(a.gpu) > 0 {
			r.GPUStart, r.GPUEnd = a.gpu[0][0], a.gpu[0][1]
			for _, g := range a.gpu {
				r.GPUStart, r.GPUEnd = min(r.GPUStart, g[0]), max(r.GPUEnd, g[1])
			}
			r.GPUBusy = union(a.gpu)
		}
		boundary := a.next
		if a.next == 0 {
			boundary = a.end
			r.Period = max(a.end, r.GPUEnd) - r.Start
		} else {
			r.Period = a.next - r.Start
		}
		window := r.GPUEnd - r.GPUStart
		r.GPUBound = len(a.gpu) > 0 && r.GPUEnd > boundary && float64(r.GPUBusy) >= GPUBoundBusy*float64(window)
	}
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
	for _, a := range order {
		im.rep.Steps = append(im.rep.Steps, a.rep)
	}
}

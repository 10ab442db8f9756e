package causal

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
)

// launchCats are the categories (lower case) of runtime calls, which tie
// the GPU work they launch by correlation id (a CUDA graph launch ties
// all its kernels to one).
var launchCats = map[string]bool{"cuda_runtime": true, "cuda_driver": true, "runtime": true}

// launchFlowCats are the categories of the flows Kineto draws from a
// launch to its GPU work; their id is the correlation id.
var launchFlowCats = map[string]bool{"ac2g": true, "async_cpu_to_gpu": true, "async_gpu": true}

const gpuAnnotation = "gpu_user_annotation"

// envelopeName matches what profilers wrap a whole recording in.
var envelopeName = regexp.MustCompile(`^(PyTorch Profiler|__cupti_profiler__|Iteration Start: .*)( \(-?\d+\))?$`)

// envelope says why an event is a wrapper rather than work ("" when it is
// work): the profiler's own envelope, or an annotation (record_function,
// its copy on the GPU timeline) that only names the work inside it.
func envelope(cat, name string) string {
	switch {
	case cat == "trace" || envelopeName.MatchString(name):
		return "profiler envelope (PyTorch Profiler, __cupti_profiler__): not work"
	case cat == "user_annotation" || cat == gpuAnnotation:
		return "annotation (user_annotation, gpu_user_annotation): names the work inside it, not work"
	}
	return ""
}

// BindReport counts how GPU work was bound to ProfilerStep#N steps.
type BindReport struct {
	// ByLaunch: bound to the step of the runtime call that launched it
	// (same correlation id), wherever it ran.
	ByLaunch int `json:"by_launch"`
	// GraphKernels: of ByLaunch, kernels that share their launch with
	// others (a CUDA graph launch); each is kept.
	GraphKernels int `json:"graph_kernels"`
	// ByTime: no launch in the trace; bound to the step in whose window
	// it started on its stream.
	ByTime int `json:"by_time"`
	// ByOrder (ChromeOptions.ToGPUEnd): no launch in the trace, but its
	// correlation id lies between those of two runtime calls of one step
	// that are (CUPTI numbers the calls in order): launched in that step.
	ByOrder int `json:"by_order,omitempty"`
	// Later: of ByLaunch, work of a step the GPU did not bound that
	// started only after the next step began; it is bound to the step in
	// whose window it started (the host had moved on).
	Later int `json:"later"`
	// Dropped: GPU events in no step (their reasons are in Dropped).
	Dropped int `json:"dropped"`
}

// stepWindow is one step's time on its process: from its marker's start to
// the next marker's start, or for the last one to its end.
type stepWindow struct {
	start, end int64
	n          int
}

func windows(ms []marker) []stepWindow {
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b marker) int { return cmp.Compare(a.start, b.start) })
	out := make([]stepWindow, len(ms))
	for k, m := range ms {
		out[k] = stepWindow{m.start, m.end, m.n}
		if k+1 < len(ms) {
			out[k].end = max(m.end, ms[k+1].start)
		}
	}
	return out
}

// in returns the step whose window holds t, or -1.
func in(ws []stepWindow, t int64) int {
	k, _ := slices.BinarySearchFunc(ws, t, func(w stepWindow, t int64) int {
		if w.start <= t {
			return -1
		}
		return 1
	})
	if k > 0 && t < ws[k-1].end {
		return ws[k-1].n
	}
	return -1
}

// bindSteps sets the step of each slice when the trace has markers: a
// host slice by its start in a step window of its process; GPU work by
// its launch's (correlation id), else by its start in a step window of
// any process (the last window stretched to the end of the work its
// launches tie to it). It returns the GPU slices bound by time.
func (im *importer) bindSteps() {
	per := map[string][]stepWindow{}
	var all []marker
	for pid, ms := range im.markers {
		per[pid] = windows(ms)
		all = append(all, ms...)
	}
	global := windows(all)
	shared := map[string]int{}
	for _, s := range im.slices {
		if s.gpu && s.corr != "" {
			shared[s.corr]++
		}
	}
	var byTime []*slice
	for _, s := range im.slices {
		if !s.gpu {
			s.iter = in(per[s.pid], s.start)
			continue
		}
		l := im.launches[s.corr]
		if s.corr == "" || l == nil {
			byTime = append(byTime, s)
			continue
		}
		if s.iter = in(per[l.pid], l.start); s.iter < 0 {
			im.drop(s.ev, "GPU work launched outside every ProfilerStep#N")
			s.dropped = true
			im.rep.Bind.Dropped++
			continue
		}
		im.rep.Bind.ByLaunch++
		if shared[s.corr] > 1 {
			im.rep.Bind.GraphKernels++
		}
		if last := &global[len(global)-1]; s.iter == last.n {
			last.end = max(last.end, s.end)
		}
	}
	im.stepsEnd = global[len(global)-1].end
	order := im.launchOrder(per)
	for _, s := range byTime {
		if n := order(s.corr); n >= 0 {
			s.iter = n
			im.rep.Bind.ByOrder++
			if n == global[len(global)-1].n {
				im.stepsEnd = max(im.stepsEnd, s.end)
			}
			continue
		}
		if s.iter = in(global, s.start); s.iter >= 0 {
			im.rep.Bind.ByTime++
			continue
		}
		im.drop(s.ev, "GPU work outside every step window, and no launch in the trace ties it to a step")
		s.dropped = true
		im.rep.Bind.Dropped++
	}
}

// launchOrder returns, for the view to the GPU's end
// (ChromeOptions.ToGPUEnd), the step that launched GPU work whose launch
// is not in the trace: the step of the runtime calls just before and just
// after it by correlation id, when one step made both (-1 otherwise, and
// always without ToGPUEnd). CUPTI numbers a process's runtime calls in
// the order they are made, so the work was queued in that step, behind
// the launches before it; bound by when it ran, it would split a step's
// queue on a stream between two steps.
func (im *importer) launchOrder(per map[string][]stepWindow) func(corr string) int {
	type call struct {
		corr uint64
		step int
	}
	var calls []call
	if im.opt.ToGPUEnd {
		for c, l := range im.launches {
			if n, err := strconv.ParseUint(c, 10, 64); err == nil {
				calls = append(calls, call{n, in(per[l.pid], l.start)})
			}
		}
	}
	slices.SortFunc(calls, func(a, b call) int { return cmp.Compare(a.corr, b.corr) })
	return func(corr string) int {
		n, err := strconv.ParseUint(corr, 10, 64)
		if err != nil || len(calls) == 0 {
			return -1
		}
		k, _ := slices.BinarySearchFunc(calls, n, func(c call, n uint64) int { return cmp.Compare(c.corr, n) })
		if k == 0 || k == len(calls) || calls[k-1].step != calls[k].step {
			return -1
		}
		return calls[k].step
	}
}

// launchEdges ties each GPU slice to the kept slice that launched it (the
// launch, or what it encloses at its start), by correlation id.
func (im *importer) launchEdges(byThread map[string][]*slice, add func(ev int, from, to *slice)) {
	for _, s := range im.slices {
		l := im.launches[s.corr]
		if !s.gpu || s.corr == "" || l == nil {
			continue
		}
		if from := bindSlice(byThread[l.pid+"/"+l.tid], l.start, false); from != nil {
			add(s.ev, from, s)
		}
	}
}

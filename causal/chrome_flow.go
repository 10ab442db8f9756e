package causal

import (
	"cmp"
	"slices"
	"strings"
)

type edge struct{ from, to *slice }

// bindFlows turns flow events and bind_id pairs into edges between kept
// slices, after waits. An edge must point forward in span order (so the
// graph has no cycle); one that does not is dropped.
func (im *importer) bindFlows(waits []edge) []edge {
	byThread := map[string][]*slice{}
	for _, s := range im.slices { // in start order
		k := s.pid + "/" + s.tid
		byThread[k] = append(byThread[k], s)
	}
	var edges []edge
	add := func(ev int, from, to *slice) {
		switch {
		case from == to:
			im.drop(ev, "flow starts and ends in the same event")
		case from.id > to.id:
			im.drop(ev, "flow points back in time")
		default:
			edges = append(edges, edge{from, to})
		}
	}
	for _, w := range waits {
		add(w.to.ev, w.from, w.to)
	}
	im.launchEdges(byThread, add)
	keys := make([]string, 0, len(im.flows))
	for k := range im.flows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fl := im.flows[k]
		if cat, id, _ := strings.Cut(k, "\x00"); launchFlowCats[strings.ToLower(cat)] && im.launches[id] != nil {
			for _, f := range fl {
				im.drop(f.ev, "launch flow: the correlation id ties the launch to its GPU work instead")
			}
			continue
		}
		slices.SortStableFunc(fl, func(a, b flowEvent) int { return cmp.Compare(a.ts, b.ts) })
		var prev *slice
		prevEv, prevS := -1, false // the last bound event, and whether it is an "s"
		for _, f := range fl {
			s := bindSlice(byThread[f.pid+"/"+f.tid], f.ts, f.next)
			switch {
			case s == nil:
				im.drop(f.ev, "flow event binds to no kept event on its thread")
				prev, prevEv = nil, -1
				continue
			case f.ph == "s":
				if prevEv >= 0 {
					im.drop(prevEv, "flow without end")
				}
				prev, prevEv, prevS = s, f.ev, true
				continue
			case prevEv < 0:
				im.drop(f.ev, "flow step or end without start")
				continue
			}
			add(f.ev, prev, s)
			prev, prevEv, prevS = s, f.ev, false
			if f.ph == "f" {
				prev, prevEv = nil, -1
			}
		}
		if prevEv >= 0 && prevS {
			im.drop(prevEv, "flow without end")
		}
	}
	bound := map[string][]*slice{}
	var binds []string
	for _, s := range im.slices {
		if s.bind != "" {
			if _, ok := bound[s.bind]; !ok {
				binds = append(binds, s.bind)
			}
			bound[s.bind] = append(bound[s.bind], s)
		}
	}
	for _, b := range binds {
		var src *slice
		for _, s := range bound[b] { // in span order
			if s.in && src != nil {
				add(s.ev, src, s)
			}
			if s.out {
				src = s
			}
		}
	}
	im.rep.Deps = len(edges)
	return edges
}

// bindSlice finds the slice of a thread (sorted by start, not overlapping)
// that encloses ts, preferring the one starting last; with next, the first
// one starting at or after ts.
func bindSlice(thread []*slice, ts int64, next bool) *slice {
	k, _ := slices.BinarySearchFunc(thread, ts, func(s *slice, t int64) int {
		if s.start <= t {
			return -1
		}
		return 1
	}) // k: first slice starting after ts
	if next {
		if k > 0 && thread[k-1].start == ts {
			return thread[k-1]
		}
		if k < len(thread) {
			return thread[k]
		}
		return nil
	}
	if k > 0 && thread[k-1].end >= ts {
		return thread[k-1]
	}
	return nil
}

// spans sets iterations, models gaps and makes the spans, in id order.
func (im *importer) spans(pipeline string, edges []edge) []Span {
	if len(im.markers) > 0 {
		im.bindSteps()
	}
	deps := map[*slice][]*slice{}
	for _, e := range edges {
		deps[e.to] = append(deps[e.to], e.from)
	}
	for _, s := range im.slices { // sources come first
		for _, d := range deps[s] {
			if s.iter < 0 && d.iter >= 0 && !s.dropped && (len(im.markers) == 0 || s.start < im.stepsEnd) {
				s.iter = d.iter
			}
			if s.problem == "" {
				s.problem = d.problem
			}
		}
	}
	if im.rep.Iterations > 0 {
		im.rep.IterationsFrom = FromMarkers
		for _, s := range im.slices {
			if s.iter < 0 && !s.dropped {
				im.drop(s.ev, "outside every ProfilerStep#N")
				s.dropped = true
			}
		}
		for _, e := range im.steps() {
			deps[e.to] = append(deps[e.to], e.from)
		}
		im.coverage()
	} else {
		im.inferIterations(edges)
	}
	for _, e := range im.modelGaps(edges) {
		deps[e.to] = append(deps[e.to], e.from)
	}
	out := make([]Span, 0, len(im.slices))
	for _, s := range im.slices {
		if s.dropped {
			continue
		}
		sp := Span{ID: s.id, Pipeline: pipeline, Iteration: max(s.iter, 0), Kernel: s.name,
			Device: s.pid, Stream: s.tid, Start: s.start, End: s.end, HostWait: s.hostWait, Boundary: s.boundary}
		if im.opt.InputDims {
			sp.Problem = s.problem
		}
		for _, d := range deps[s] {
			if !d.dropped && !slices.Contains(sp.Deps, d.id) {
				sp.Deps = append(sp.Deps, d.id)
			}
		}
		if t := (Track{sp.Device, sp.Stream}); s.gpu && !slices.Contains(im.rep.GPUTracks, t) {
			im.rep.GPUTracks = append(im.rep.GPUTracks, t)
		}
		out = append(out, sp)
	}
	slices.SortFunc(im.rep.GPUTracks, compareTracks)
	im.rep.Spans = len(out)
	return out
}

// GPUWork says whether s is GPU work of the trace r reports on (on one of
// its GPUTracks, no boundary). As SpreadOptions.End, it measures each
// step to its last GPU op: which kernels bound when the GPU work of a
// step is done, where the host ends the step.
func (r ChromeReport) GPUWork(s Span) bool {
	return !s.Boundary && slices.Contains(r.GPUTracks, Track{s.Device, s.Stream})
}

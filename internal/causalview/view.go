package causalview

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
)

// seed seeds the bootstrap.
const seed = 1

// Batch is one batch of spans as a runtime sent it; Label names it in
// what Split skipped ("batch 3").
type Batch struct {
	Label string
	Spans []causal.Span
	Err   error // the batch did not decode: Split skips it, saying why
}

// Split splits batches into iterations, each one graph. Span ids are
// renumbered across batches (each batch numbers its own). Batches are read
// in order as runs of one process: a batch whose smallest iteration is
// below the previous batch's largest starts a new run (a runtime restarted
// and counts from 0 again), so iterations of two processes, whose clocks
// differ, are not merged; within a run an iteration may span batches.
// Dependencies across iterations are dropped. An iteration that does not
// build a graph is skipped, and so is a batch with Err; skipped says which
// and why.
func Split(batches []Batch) (iters [][]causal.Span, skipped []string) {
	type key struct{ run, iter int }
	groups := map[key][]causal.Span{}
	var order []key
	run, prevMax := 0, -1
	var next uint64
	for _, b := range batches {
		if b.Err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", b.Label, b.Err))
			continue
		}
		if len(b.Spans) == 0 {
			continue
		}
		lo, hi := b.Spans[0].Iteration, b.Spans[0].Iteration
		for _, sp := range b.Spans {
			lo, hi = min(lo, sp.Iteration), max(hi, sp.Iteration)
		}
		if lo < prevMax {
			run++
		}
		prevMax = hi
		ids := make(map[uint64]uint64, len(b.Spans))
		iterOf := make(map[uint64]int, len(b.Spans))
		for _, sp := range b.Spans {
			next++
			ids[sp.ID], iterOf[sp.ID] = next, sp.Iteration
		}
		for _, sp := range b.Spans {
			var deps []uint64
			for _, d := range sp.Deps {
				if iterOf[d] == sp.Iteration {
					deps = append(deps, ids[d])
				}
			}
			sp.ID, sp.Deps = ids[sp.ID], deps
			k := key{run, sp.Iteration}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], sp)
		}
	}
	slices.SortFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.iter, b.iter))
	})
	for _, k := range order {
		g := groups[k]
		if err := causal.Validate(g); err != nil {
			skipped = append(skipped, fmt.Sprintf("iteration %d of run %d: %v", k.iter, k.run, err))
			continue
		}
		iters = append(iters, g)
	}
	return iters, skipped
}

// Tuned is what is known of the kernels' tuned times: the changes that
// put a kernel at its tuned time (by kernel), and for each kernel either
// its tuned times or a note saying why they are unknown.
type Tuned struct {
	Changes map[string][]causal.Change
	Info    map[string]*api.TunedTime
	Notes   map[string]string
}

// Problems returns, by kernel, the distinct problems its spans give, in
// first-seen order: what Tuned needs to cover.
func Problems(iters [][]causal.Span) map[string][]string {
	out := map[string][]string{}
	for _, it := range iters {
		for _, sp := range it {
			if !slices.Contains(out[sp.Kernel], sp.Problem) {
				out[sp.Kernel] = append(out[sp.Kernel], sp.Problem)
			}
		}
	}
	return out
}

// Profile summarises iters (from Split) into the answer of GET
// /v1/causal/{pipeline}, kernels by influence, highest first. skipped and
// batches are reported as given.
func Profile(pipeline string, batches int, iters [][]causal.Span, skipped []string, tuned Tuned) (api.Causal, error) {
	return ProfileTo(pipeline, batches, iters, skipped, tuned, nil)
}

// ProfileTo is Profile with each iteration measured to the latest end
// among the spans end holds (causal.SpreadOptions.End; nil: to its end).
func ProfileTo(pipeline string, batches int, iters [][]causal.Span, skipped []string, tuned Tuned, end func(causal.Span) bool) (api.Causal, error) {
	out := api.Causal{Pipeline: pipeline, Batches: batches, Skipped: skipped, CurveStep: causal.CurveStep, Kernels: []api.CausalKernel{}}
	if out.Skipped == nil {
		out.Skipped = []string{}
	}
	if len(iters) == 0 {
		return out, nil
	}
	ps, err := causal.SpreadIterations(iters, causal.SpreadOptions{RNG: rand.New(rand.NewPCG(seed, 0)), Tuned: tuned.Changes, End: end})
	if err != nil {
		return out, fmt.Errorf("profile pipeline %q: %w", pipeline, err)
	}
	out.Iterations, out.EndToEnd, out.Attributed = ps.Iterations, estimate(ps.EndToEnd), estimate(ps.Attributed)
	for _, t := range ps.Tracks {
		out.Tracks = append(out.Tracks, api.CausalTrack{Device: t.Device, Stream: t.Stream, Busy: estimate(t.Busy)})
	}
	for _, it := range iters {
		out.Spans += len(it)
	}
	for _, k := range ps.Kernels {
		ck := api.CausalKernel{Kernel: k.Kernel, Problem: k.Problem, Share: estimate(k.Share), Critical: estimate(k.Critical),
			Influence: estimate(k.Influence), Slack: estimate(k.Slack), Tuned: tuned.Info[k.Kernel], TunedNote: tuned.Notes[k.Kernel]}
		for _, c := range k.Curve {
			ck.Curve = append(ck.Curve, estimate(c))
		}
		if k.Gain != nil {
			g := estimate(*k.Gain)
			ck.Gain = &g
		}
		out.Kernels = append(out.Kernels, ck)
	}
	slices.SortStableFunc(out.Kernels, func(a, b api.CausalKernel) int {
		return cmp.Compare(b.Influence.Median, a.Influence.Median)
	})
	return out, nil
}

// Estimate is e on the wire.
func Estimate(e causal.Estimate) api.Estimate { return estimate(e) }

func estimate(e causal.Estimate) api.Estimate {
	return api.Estimate{N: e.N, Median: e.Median, Min: e.Min, Q1: e.Q1, Q3: e.Q3, Max: e.Max, Lo: e.Lo, Hi: e.Hi}
}

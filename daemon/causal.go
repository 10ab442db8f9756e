package daemon

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/store"
)

// causalSeed seeds the bootstrap of GET /v1/causal, so the same stored
// spans give the same answer every time.
const causalSeed = 1

// getCausal profiles a declared pipeline from its stored spans: each
// kernel's share of the end-to-end time, on the critical path, influence,
// virtual-speedup curve and the gain predicted at its tuned time, each as
// a spread over the iterations.
func (s *server) getCausal(r *http.Request) (any, error) {
	name := r.PathValue("pipeline")
	if _, ok := s.sched.pipeline(name); !ok {
		return nil, notFoundf("pipeline %q is not declared (a pipeline file in the spec dir declares it)", name)
	}
	batches, err := s.st.SpanBatches(name)
	if err != nil {
		return nil, err
	}
	iters, skipped := iterations(batches)
	out := api.Causal{Pipeline: name, Batches: len(batches), Skipped: skipped, CurveStep: causal.CurveStep, Kernels: []api.CausalKernel{}}
	if out.Skipped == nil {
		out.Skipped = []string{}
	}
	if len(iters) == 0 {
		return out, nil
	}
	tuned, notes, info := s.tunedChanges(iters)
	ps, err := causal.SpreadIterations(iters, causal.SpreadOptions{RNG: rand.New(rand.NewPCG(causalSeed, 0)), Tuned: tuned})
	if err != nil {
		return nil, fmt.Errorf("profile pipeline %q: %w", name, err)
	}
	out.Iterations, out.EndToEnd = ps.Iterations, apiEstimate(ps.EndToEnd)
	for _, it := range iters {
		out.Spans += len(it)
	}
	for _, k := range ps.Kernels {
		ck := api.CausalKernel{Kernel: k.Kernel, Share: apiEstimate(k.Share), Critical: apiEstimate(k.Critical),
			Influence: apiEstimate(k.Influence), Tuned: info[k.Kernel], TunedNote: notes[k.Kernel]}
		for _, c := range k.Curve {
			ck.Curve = append(ck.Curve, apiEstimate(c))
		}
		if k.Gain != nil {
			g := apiEstimate(*k.Gain)
			ck.Gain = &g
		}
		out.Kernels = append(out.Kernels, ck)
	}
	s.measuredChecks(name, out.Kernels)
	slices.SortStableFunc(out.Kernels, func(a, b api.CausalKernel) int {
		return cmp.Compare(b.Influence.Median, a.Influence.Median)
	})
	return out, nil
}

func apiEstimate(e causal.Estimate) api.Estimate {
	return api.Estimate{N: e.N, Median: e.Median, Min: e.Min, Q1: e.Q1, Q3: e.Q3, Max: e.Max, Lo: e.Lo, Hi: e.Hi}
}

// iterations splits a pipeline's stored batches into iterations, each one
// graph. Span ids are renumbered across batches (each batch numbers its
// own). Batches are read in order as runs of one process: a batch whose
// smallest iteration is below the previous batch's largest starts a new
// run (a runtime restarted and counts from 0 again), so iterations of two
// processes, whose clocks differ, are not merged; within a run an
// iteration may span batches. An iteration that does not build a graph is
// skipped, and so is a batch that no longer decodes; skipped says which
// and why.
func iterations(batches []store.SpanBatch) (iters [][]causal.Span, skipped []string) {
	type key struct{ run, iter int }
	groups := map[key][]causal.Span{}
	var order []key
	run, prevMax := 0, -1
	var next uint64
	for _, b := range batches {
		spans, err := causal.DecodeSpans(b.Spans)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("batch %d: %v", b.Seq, err))
			continue
		}
		lo, hi := spans[0].Iteration, spans[0].Iteration
		for _, sp := range spans {
			lo, hi = min(lo, sp.Iteration), max(hi, sp.Iteration)
		}
		if lo < prevMax {
			run++
		}
		prevMax = hi
		ids := make(map[uint64]uint64, len(spans))
		iterOf := make(map[uint64]int, len(spans))
		for _, sp := range spans {
			next++
			ids[sp.ID], iterOf[sp.ID] = next, sp.Iteration
		}
		for _, sp := range spans {
			var deps []uint64
			for _, d := range sp.Deps {
				if iterOf[d] == sp.Iteration { // dependencies across iterations are dropped
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

// tunedChanges finds, for each kernel of the spans that is a loaded
// kernel spec, its time tuned against its default at each problem its
// spans give: the job's best ok trial over the trial of its default
// config. A kernel gets changes only when every problem of its spans has
// both; otherwise notes says what is missing.
func (s *server) tunedChanges(iters [][]causal.Span) (map[string][]causal.Change, map[string]string, map[string]*api.TunedTime) {
	problems := map[string][]string{} // kernel → distinct problems, in first-seen order
	for _, it := range iters {
		for _, sp := range it {
			if !slices.Contains(problems[sp.Kernel], sp.Problem) {
				problems[sp.Kernel] = append(problems[sp.Kernel], sp.Problem)
			}
		}
	}
	changes := map[string][]causal.Change{}
	notes := map[string]string{}
	info := map[string]*api.TunedTime{}
	for kernel, ps := range problems {
		k, ok := s.sched.kernel(kernel)
		if !ok {
			notes[kernel] = "not a loaded kernel spec"
			continue
		}
		tt := &api.TunedTime{}
		var chs []causal.Change
		for _, p := range ps {
			tp, note := s.tunedProblem(k, p)
			if note != "" {
				notes[kernel] = note
				break
			}
			tt.Problems = append(tt.Problems, tp)
			chs = append(chs, causal.Change{Kernel: kernel, Problem: p, Scale: tp.Scale})
		}
		if notes[kernel] == "" {
			changes[kernel], info[kernel] = chs, tt
		}
	}
	return changes, notes, info
}

// tunedProblem is kernel k's tuned time at the problem a span gives (any
// problem when k has one job and the span gives none), or why unknown.
func (s *server) tunedProblem(k *kernel, problem string) (api.TunedProblem, string) {
	var j *job
	if problem == "" && len(k.jobs) == 1 {
		j = k.jobs[0]
	} else if dims, err := parseProblem(problem); err == nil {
		want := evaluate.Problem{Dims: dims}.String()
		for _, jj := range k.jobs {
			if jj.key.Problem == want {
				j = jj
				break
			}
		}
	}
	if j == nil {
		return api.TunedProblem{}, fmt.Sprintf("no job of kernel %s at problem %q", k.spec.Name, problem)
	}
	trials, err := s.st.Trials(j.key)
	if err != nil {
		return api.TunedProblem{}, fmt.Sprintf("trials of %s: %v", j.key, err)
	}
	dk := defaultKey(j)
	tp := api.TunedProblem{Problem: problem, Job: j.key.String()}
	for _, t := range trials {
		if t.Status != "ok" || !(t.TimeMS > 0) {
			continue
		}
		if t.Key == dk {
			tp.DefaultMS = t.TimeMS
		}
		if tp.BestMS == 0 || t.TimeMS < tp.BestMS {
			tp.BestMS = t.TimeMS
		}
	}
	switch {
	case tp.BestMS == 0:
		return tp, fmt.Sprintf("job %s has no ok trial yet", j.key)
	case tp.DefaultMS == 0:
		return tp, fmt.Sprintf("job %s has no ok trial of its default config %s", j.key, dk)
	}
	tp.Scale = tp.BestMS / tp.DefaultMS
	return tp, ""
}

package daemon

import (
	"fmt"
	"net/http"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/causalview"
)

// getCausal profiles a declared pipeline from its stored spans: each
// kernel's share of the end-to-end time, on the critical path, influence,
// virtual-speedup curve and the gain predicted at its tuned time, each as
// a spread over the iterations (see causalview.Split for how batches make
// iterations).
func (s *server) getCausal(r *http.Request) (any, error) {
	name := r.PathValue("pipeline")
	if _, ok := s.sched.pipeline(name); !ok {
		return nil, sockapi.NotFoundf("pipeline %q is not declared (a pipeline file in the spec dir declares it)", name)
	}
	iters, skipped, n, err := s.storedIterations(name)
	if err != nil {
		return nil, err
	}
	out, err := causalview.Profile(name, n, iters, skipped, s.tuned(iters))
	if err == nil {
		s.measuredChecks(name, out.Kernels) // experiment.go
	}
	return out, err
}

// storedIterations reads a pipeline's stored batches as iterations, with
// what was skipped and the number of batches read.
func (s *server) storedIterations(name string) ([][]causal.Span, []string, int, error) {
	stored, err := s.st.SpanBatches(name)
	if err != nil {
		return nil, nil, 0, err
	}
	batches := make([]causalview.Batch, len(stored))
	for i, b := range stored {
		batches[i].Label = fmt.Sprintf("batch %d", b.Seq)
		batches[i].Spans, batches[i].Err = causal.DecodeSpans(b.Spans)
	}
	iters, skipped := causalview.Split(batches)
	return iters, skipped, len(stored), nil
}

// tuned finds, for each kernel of the spans that is a loaded kernel spec,
// its time tuned against its default at each problem its spans give: the
// job's best ok trial over the trial of its default config. A kernel gets
// changes only when every problem of its spans has both; otherwise its
// note says what is missing.
func (s *server) tuned(iters [][]causal.Span) causalview.Tuned {
	t := causalview.Tuned{Changes: map[string][]causal.Change{}, Notes: map[string]string{}, Info: map[string]*api.TunedTime{}}
	for kernel, ps := range causalview.Problems(iters) {
		k, ok := s.sched.kernel(kernel)
		if !ok {
			t.Notes[kernel] = "not a loaded kernel spec"
			continue
		}
		tt := &api.TunedTime{}
		var chs []causal.Change
		for _, p := range ps {
			tp, note := s.tunedProblem(k, p)
			if note != "" {
				t.Notes[kernel] = note
				break
			}
			tt.Problems = append(tt.Problems, tp)
			chs = append(chs, causal.Change{Kernel: kernel, Problem: p, Scale: tp.Scale})
		}
		if t.Notes[kernel] == "" {
			t.Changes[kernel], t.Info[kernel] = chs, tt
		}
	}
	return t
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

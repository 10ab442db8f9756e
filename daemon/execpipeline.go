package daemon

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/harness"
	"github.com/quasim/quasim/internal/pipeline"
	"github.com/quasim/quasim/internal/spec"
)

// harnessOf is the exec harness of kernel k's jobs, or nil.
func harnessOf(k *kernel) *harness.Harness {
	for _, j := range k.jobs {
		if h, ok := j.spec.Evaluator.(*harness.Harness); ok {
			return h
		}
	}
	return nil
}

// withExecPipelines declares each pipeline an exec harness declared in its
// hello, unless a pipeline file declares one of that name (which then
// sets its kernels and retention). Such a pipeline keeps each job's
// budget. It returns notes of the ones it could not declare.
func withExecPipelines(pipes map[string]*spec.Pipeline, kernels map[string]*kernel) []string {
	var notes []string
	names := make([]string, 0, len(kernels))
	for n := range kernels {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		k := kernels[n]
		h := harnessOf(k)
		if h == nil || h.Pipeline() == nil {
			continue
		}
		name := h.Pipeline().Name
		if name == pipeline.BuiltinName {
			notes = append(notes, fmt.Sprintf("%s: the harness's pipeline %q: the name is the builtin pipeline's; not declared", k.spec.Source, name))
			continue
		}
		if p, ok := pipes[name]; ok {
			if p.Source != k.spec.Source && !slices.Contains(p.Kernels, n) {
				notes = append(notes, fmt.Sprintf("%s: the harness's pipeline %q is declared by %s too; that one is kept", k.spec.Source, name, p.Source))
			}
			continue
		}
		pipes[name] = &spec.Pipeline{Name: name, Source: k.spec.Source, Kernels: []string{n},
			Retention: spec.Retention{Spans: spec.DefaultRetainSpans, Batches: spec.DefaultRetainBatches}}
	}
	return notes
}

// execPipeline finds the exec harness that declared pipeline name, and
// its kernel.
func (s *server) execPipeline(name string) (*harness.Harness, *kernel, bool) {
	ks, _ := s.sched.snapshot()
	for _, k := range ks {
		if h := harnessOf(k); h != nil && h.Pipeline() != nil && h.Pipeline().Name == name {
			return h, k, true
		}
	}
	return nil, nil, false
}

// useServedExec sets each stage of e that runs the harness's own kernel
// to the served config of kernel k's job at the stage's problem, where it
// serves one; it returns which stages it set.
func (s *server) useServedExec(e *pipeline.Exec, h *harness.Harness, k *kernel) map[string]bool {
	set := map[string]bool{}
	for _, st := range e.Pipeline().Stages {
		if st.Kernel == h.Hello().Name {
			set[st.Name] = s.setServed(k, st, h.Device(), e.SetConfig)
		}
	}
	return set
}

// execDefaults is the default perturbations of e, sized by the median
// end-to-end time of 5 baseline iterations.
func execDefaults(ctx context.Context, e *pipeline.Exec) ([]pipeline.Perturbation, error) {
	var times []float64
	for it := range 5 {
		x, err := e.Run(ctx, -1-it, nil)
		if err != nil {
			return nil, err
		}
		times = append(times, float64(x.EndToEnd))
	}
	return pipeline.ExecPerturbations(e, time.Duration(evaluate.Median(times))), nil
}

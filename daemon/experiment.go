package daemon

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/internal/causalview"
	"github.com/quasim/quasim/internal/pipeline"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/store"
)

// postExperiment runs a perturbation experiment on a pipeline quasimd can
// run itself: the builtin one, or one an exec harness declared. Stages of
// the pipeline's own tuned kernels run at their jobs' served configs, and
// the experiment holds the device lock (the CPU's; the harness's device)
// so no cycle measures beside it; it stores and returns the report.
func (s *server) postExperiment(r *http.Request) (any, error) {
	name := r.PathValue("pipeline")
	var tgt pipeline.Target
	var exec *pipeline.Exec
	var defaults []pipeline.Perturbation
	var served map[string]bool
	device := builtin.CPUClass()
	start := time.Now()
	if name == pipeline.BuiltinName {
		rn, err := pipeline.New(pipeline.Config{Pipeline: pipeline.Builtin(), Clock: pipeline.Since(start), Seed: s.sched.seed})
		if err != nil {
			return nil, err
		}
		tgt, defaults, served = rn, pipeline.BuiltinPerturbations(), s.useServed(rn)
	} else {
		h, k, ok := s.execPipeline(name)
		if !ok {
			return nil, sockapi.NotFoundf("pipeline %q: quasimd runs only the %q pipeline and those exec harnesses declare; others are measured by their runtimes", name, pipeline.BuiltinName)
		}
		var err error
		if exec, err = pipeline.NewExec(h); err != nil {
			return nil, err
		}
		tgt, served, device = exec, s.useServedExec(exec, h, k), h.Device()
	}
	var req api.ExperimentRequest
	if err := sockapi.DecodeBody(r, &req); err != nil {
		return nil, err
	}
	switch {
	case req.Runs == 0:
		req.Runs = 10
	case req.Runs < 2 || req.Runs > api.MaxExperimentRuns:
		return nil, sockapi.Invalidf("runs %d: want 2 to %d", req.Runs, api.MaxExperimentRuns)
	}
	perts, err := experimentPlan(req, tgt, defaults)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lockDevice(r.Context(), device)
	if err != nil {
		return nil, fmt.Errorf("%w: device lock of %s: %v", api.ErrUnavailable, device, err)
	}
	if exec != nil && perts == nil && !req.Baseline {
		perts, err = execDefaults(r.Context(), exec)
	}
	var rep pipeline.Report
	if err == nil {
		rep, err = pipeline.Experiment(r.Context(), tgt, perts, pipeline.ExperimentOptions{Runs: req.Runs, RNG: rand.New(rand.NewPCG(s.sched.seed, 13))}, s.sched.clock())
	}
	unlock()
	if err != nil {
		return nil, err
	}
	ex := experimentAPI(rep, served)
	ex.TookS = time.Since(start).Seconds()
	body, err := json.Marshal(ex)
	if err != nil {
		return nil, err
	}
	stored, err := s.st.NewExperiment(store.Experiment{Pipeline: name, At: ex.At, Report: body})
	if err != nil {
		// The report is real even when the state file refuses it.
		s.log.Error().Err(err).Str("pipeline", name).Msg("experiment not stored")
	}
	ex.ID = stored.ID
	s.keepSpans(name, rep.Spans)
	s.log.Info().Str("pipeline", name).Int("id", ex.ID).Int("perturbations", len(ex.Results)).Int("runs", ex.Runs).
		Float64("baseline_ms", ex.Baseline.Median).Float64("mean_error", ex.MeanError).Float64("worst_error", ex.WorstError).
		Int("within", ex.Within).Msg("experiment done")
	return ex, nil
}

// experimentPlan is the perturbations req asks for on t's pipeline: its
// own, defaults otherwise, none for a baseline; each one checked.
func experimentPlan(req api.ExperimentRequest, t pipeline.Target, defaults []pipeline.Perturbation) ([]pipeline.Perturbation, error) {
	if req.Baseline && len(req.Perturbations) > 0 {
		return nil, sockapi.Invalidf("baseline: runs no perturbation, but %d are given", len(req.Perturbations))
	}
	if req.Speedups && (req.Baseline || len(req.Perturbations) > 0) {
		return nil, sockapi.Invalidf("speedups: runs its own perturbations, not with baseline or perturbations")
	}
	perts := defaults
	switch {
	case req.Speedups:
		if _, ok := t.(*pipeline.Runner); !ok {
			return nil, sockapi.Invalidf("speedups: the builtin pipeline only (an exec harness delays just the stage asked for)")
		}
		perts = pipeline.BuiltinSpeedups()
	case req.Baseline:
		perts = nil
	case len(req.Perturbations) > 0:
		perts = nil
		for i, p := range req.Perturbations {
			if !(p.DelayMS >= 0 && p.DelayMS <= 1000) {
				return nil, sockapi.Invalidf("perturbations[%d]: delay_ms %v: want 0 to 1000", i, p.DelayMS)
			}
			if p.Name == "" {
				p.Name = fmt.Sprintf("p%d", i)
			}
			perts = append(perts, pipeline.Perturbation{Name: p.Name, Stage: p.Stage, Config: p.Config,
				Delay: time.Duration(p.DelayMS * float64(time.Millisecond)), Speedup: p.Speedup})
		}
	}
	if err := t.Check(perts); err != nil {
		return nil, sockapi.Invalidf("%v", err)
	}
	return perts, nil
}

// getExperiments lists a pipeline's stored experiments, newest first.
func (s *server) getExperiments(r *http.Request) (any, error) {
	name := r.PathValue("pipeline")
	kept, err := s.st.Experiments(name, 0)
	if err != nil {
		return nil, err
	}
	out := api.Experiments{Pipeline: name, Experiments: []api.Experiment{}}
	for _, k := range kept {
		var ex api.Experiment
		if err := json.Unmarshal(k.Report, &ex); err != nil {
			s.log.Error().Err(err).Str("pipeline", name).Int("id", k.ID).Msg("experiment does not decode; skipped")
			continue
		}
		ex.ID = k.ID
		out.Experiments = append(out.Experiments, ex)
	}
	if len(out.Experiments) == 0 && name != pipeline.BuiltinName {
		return nil, sockapi.NotFoundf("pipeline %q has no experiments", name)
	}
	return out, nil
}

// useServed sets each stage of rn to its job's served config, where a
// loaded builtin kernel of that name has a job at the stage's problem on
// this CPU and serves a config; it returns which stages it set.
func (s *server) useServed(rn *pipeline.Runner) map[string]bool {
	set := map[string]bool{}
	for _, st := range rn.Pipeline().Stages {
		k, ok := s.sched.kernel(st.Kernel)
		if !ok || k.spec.Evaluator != "builtin:"+st.Kernel {
			continue
		}
		set[st.Name] = s.setServed(k, st, builtin.CPUClass(), rn.SetConfig)
	}
	return set
}

// setServed sets stage st to the config kernel k's job at its problem on
// device serves, where there is one, and reports whether it did.
func (s *server) setServed(k *kernel, st pipeline.Stage, device string, set func(stage, key string) error) bool {
	for _, j := range k.jobs {
		if j.key.Problem != st.Problem || j.key.Device != device {
			continue
		}
		sv, ok, err := s.st.Served(j.key)
		if err != nil || !ok {
			return false
		}
		if err := set(st.Name, sv.Key); err != nil {
			s.log.Warn().Err(err).Str("job_id", j.key.String()).Str("pipeline_stage", st.Name).Msg("served config does not fit the pipeline; running the default")
			return false
		}
		return true
	}
	return false
}

// experimentAPI is rep on the wire.
func experimentAPI(rep pipeline.Report, served map[string]bool) api.Experiment {
	ex := api.Experiment{Pipeline: rep.Pipeline.Name, At: rep.Started, Runs: rep.Runs, Baseline: causalview.Estimate(rep.Baseline),
		MeanError: rep.MeanError, WorstError: rep.WorstError, Within: rep.Within, Tolerance: pipeline.Tolerance,
		Results: []api.ExperimentResult{}}
	kernel := map[string][2]string{}
	for _, st := range rep.Pipeline.Stages {
		ex.Stages = append(ex.Stages, api.ExperimentStage{Name: st.Name, Kernel: st.Kernel, Problem: st.Problem,
			Stream: st.Stream, After: st.After, Config: st.Config, Served: served[st.Name]})
		kernel[st.Name] = [2]string{st.Kernel, st.Problem}
	}
	for _, r := range rep.Results {
		p := r.Perturbation
		ex.Results = append(ex.Results, api.ExperimentResult{
			Perturbation: api.Perturbation{Name: p.Name, Stage: p.Stage, Config: p.Config, DelayMS: float64(p.Delay) / float64(time.Millisecond), Speedup: p.Speedup},
			Kernel:       kernel[p.Stage][0], Problem: kernel[p.Stage][1], OnPath: r.OnPath,
			Predicted: causalview.Estimate(r.Predicted), Measured: causalview.Estimate(r.Measured),
			Error: r.Error, Outside: r.Outside, BaseMS: r.BaseMS, Scale: r.Scale, OvershootMS: r.OvershootMS,
			PausedMS: r.PausedMS,
		})
	}
	return ex
}

// withBuiltinPipeline declares the builtin pipeline when the daemon tunes
// the builtin kernels (no kernel spec files) and no pipeline file declares
// any pipeline. Otherwise a pipeline file named builtin declares it, which
// also sets its kernels, budget_by_influence and retention.
func withBuiltinPipeline(pipes map[string]*spec.Pipeline, kernels map[string]*kernel) {
	if len(pipes) > 0 || len(kernels) == 0 {
		return
	}
	for _, k := range kernels {
		if k.spec.Source != spec.SourceBuiltin {
			return
		}
	}
	p := &spec.Pipeline{Name: pipeline.BuiltinName, Source: spec.SourceBuiltin, BudgetByInfluence: true,
		Retention: spec.Retention{Spans: spec.DefaultRetainSpans, Batches: spec.DefaultRetainBatches}}
	for _, st := range pipeline.Builtin().Stages {
		if !slices.Contains(p.Kernels, st.Kernel) {
			p.Kernels = append(p.Kernels, st.Kernel)
		}
	}
	slices.Sort(p.Kernels)
	pipes[p.Name] = p
}

// keepSpans stores an experiment's baseline spans as a batch of the
// pipeline, as a runtime's posted spans are, when it is declared (with its
// retention); GET /v1/causal then profiles them.
func (s *server) keepSpans(name string, spans []causal.Span) {
	p, ok := s.sched.pipeline(name)
	if !ok || len(spans) == 0 {
		return
	}
	if len(spans) > p.Retention.Spans {
		spans = spans[len(spans)-p.Retention.Spans:]
	}
	data, err := json.Marshal(spans)
	if err == nil {
		_, err = s.st.AddSpans(name, store.SpanBatch{At: s.sched.clock().UTC(), Count: len(spans), Spans: data},
			store.SpanRetention{Spans: p.Retention.Spans, Batches: p.Retention.Batches})
	}
	if err != nil {
		s.log.Error().Err(err).Str("pipeline", name).Msg("experiment's spans not stored")
	}
}

// measuredChecks fills each kernel's measured check from the pipeline's
// newest experiment: the perturbation of that kernel (at that problem,
// where the kernel is a row per problem) most like tuning it
// (a config that ran faster alone, else the first perturbation of it),
// as end-to-end fractions saved.
func (s *server) measuredChecks(name string, kernels []api.CausalKernel) {
	kept, err := s.st.Experiments(name, 1)
	if err != nil || len(kept) == 0 {
		return
	}
	var ex api.Experiment
	if err := json.Unmarshal(kept[0].Report, &ex); err != nil {
		return
	}
	for i := range kernels {
		var pick *api.ExperimentResult
		for j := range ex.Results {
			r := &ex.Results[j]
			// A kernel that two stages run is a row per problem.
			if r.Kernel != kernels[i].Kernel || kernels[i].Problem != "" && r.Problem != kernels[i].Problem {
				continue
			}
			if pick == nil || (r.Perturbation.Config != "" && r.Scale < 1 && !(pick.Perturbation.Config != "" && pick.Scale < 1)) {
				pick = r
			}
		}
		if pick == nil {
			continue
		}
		m := pick.Measured
		what := fmt.Sprintf("%s +%gms", pick.Perturbation.Stage, pick.Perturbation.DelayMS)
		if pick.Perturbation.Config != "" {
			what = fmt.Sprintf("%s at %s", pick.Perturbation.Stage, pick.Perturbation.Config)
		}
		kernels[i].Measured = &api.MeasuredCheck{
			Experiment: fmt.Sprintf("%s (experiment %d)", what, kept[0].ID),
			Predicted:  -pick.Predicted.Median / 100,
			// A change in percent (positive slower) as a fraction saved.
			Measured: api.Estimate{N: m.N, Median: -m.Median / 100, Min: -m.Max / 100, Q1: -m.Q3 / 100, Q3: -m.Q1 / 100,
				Max: -m.Min / 100, Lo: -m.Hi / 100, Hi: -m.Lo / 100},
			Runs: ex.Runs,
		}
	}
}

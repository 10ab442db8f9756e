package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/evaluate"
)

// ExperimentOptions configures Experiment.
type ExperimentOptions struct {
	Runs   int        // pairs per perturbation (at least 2; default 10)
	Warmup int        // iterations run first and dropped (default 5)
	Alone  int        // runs of a stage alone per config, in turn, for config predictions (default 31)
	RNG    *rand.Rand // bootstrap resamples (required)
	// Progress, when set, is told of each perturbation's result.
	Progress func(Result)
}

// Result is one perturbation's prediction and measurement, both changes
// of end-to-end time in percent of the paired baseline's (positive is
// slower).
type Result struct {
	Perturbation Perturbation    `json:"perturbation"`
	OnPath       float64         `json:"on_path"` // share of baseline iterations with the stage on the critical path
	Predicted    causal.Estimate `json:"predicted"`
	Measured     causal.Estimate `json:"measured"`
	// Error is |Predicted.Median - Measured.Median|, in points.
	Error float64 `json:"error"`
	// Outside is how far Predicted.Median lies outside Measured's
	// interval [Lo, Hi], in points; 0 inside.
	Outside float64 `json:"outside"`
	// BaseMS is the median baseline end-to-end time of the pairs.
	BaseMS float64 `json:"base_ms"`
	// Scale is the ratio of the stage's time alone at the new config to
	// its own (config perturbations only).
	Scale float64 `json:"scale,omitempty"`
	// OvershootMS is the median of how much longer than asked the delay
	// waited (delay perturbations only); the prediction uses the delay as
	// inserted.
	OvershootMS float64 `json:"overshoot_ms,omitempty"`
	// PausedMS is the median pause a virtual speedup inserted, f·t
	// (speedups only): the end-to-end gain it stands for on the critical
	// path.
	PausedMS float64 `json:"paused_ms,omitempty"`
}

// Report is a whole experiment.
type Report struct {
	Pipeline Pipeline  `json:"pipeline"`
	Started  time.Time `json:"started"`
	Runs     int       `json:"runs"`
	// Baseline is the end-to-end time of every baseline iteration, ms.
	Baseline   causal.Estimate `json:"baseline"`
	Results    []Result        `json:"results"`
	MeanError  float64         `json:"mean_error"`  // mean Error over Results, points
	WorstError float64         `json:"worst_error"` // largest Error
	// Within counts results whose prediction is inside the measurement's
	// interval or within 2 points of it.
	Within int `json:"within"`
	// Spans are the baseline iterations' spans, for the caller to keep.
	Spans []causal.Span `json:"-"`
}

// Target is what an experiment runs: the builtin kernels' Runner, or an
// exec harness's declared pipeline (Exec).
type Target interface {
	// Pipeline is the pipeline run, each stage's config key filled in.
	Pipeline() Pipeline
	// Check reports whether every perturbation applies.
	Check(perts []Perturbation) error
	// Run runs iteration it, perturbed by p when p is not nil.
	Run(ctx context.Context, it int, p *Perturbation) (Iteration, error)
	// Scale is how much longer stage takes at config key than at its own,
	// from runs timings of each in turn: the model knows durations, not
	// configs.
	Scale(ctx context.Context, stage, key string, runs int) (float64, error)
}

// Tolerance is how far outside the measured interval a prediction may lie
// and still count as checked, in points of end-to-end time.
const Tolerance = 2.0

// Experiment runs every perturbation opt.Runs times in pairs with a
// baseline iteration and compares prediction and measurement (see the
// package doc); with no perturbations it runs opt.Runs baseline
// iterations only. now stamps the report.
func Experiment(ctx context.Context, r Target, perts []Perturbation, opt ExperimentOptions, now time.Time) (Report, error) {
	if opt.RNG == nil {
		return Report{}, fmt.Errorf("experiment: no RNG")
	}
	if opt.Runs == 0 {
		opt.Runs = 10
	}
	if opt.Runs < 2 {
		return Report{}, fmt.Errorf("experiment: %d runs, want at least 2", opt.Runs)
	}
	if opt.Warmup == 0 {
		opt.Warmup = 5
	}
	if opt.Alone == 0 {
		opt.Alone = 31
	}
	if err := r.Check(perts); err != nil {
		return Report{}, err
	}
	it := 0
	for range opt.Warmup {
		if _, err := r.Run(ctx, it, nil); err != nil {
			return Report{}, err
		}
		it++
	}
	rep := Report{Pipeline: r.Pipeline(), Started: now, Runs: opt.Runs}
	var base []float64 // baseline end-to-end times, ms
	for k := 0; len(perts) == 0 && k < opt.Runs; k++ {
		b, err := r.Run(ctx, it, nil)
		if err != nil {
			return Report{}, err
		}
		it++
		rep.Spans = append(rep.Spans, b.Spans...)
		base = append(base, float64(b.EndToEnd)/1e6)
	}
	for _, p := range perts {
		res, err := perturb(ctx, r, &it, p, &rep.Spans, &base, opt)
		if err != nil {
			return Report{}, err
		}
		if opt.Progress != nil {
			opt.Progress(res)
		}
		rep.Results = append(rep.Results, res)
	}
	var err error
	if rep.Baseline, err = causal.Bootstrap(base, causal.SpreadOptions{RNG: opt.RNG}); err != nil {
		return Report{}, err
	}
	for _, res := range rep.Results {
		rep.MeanError += res.Error / float64(len(rep.Results))
		rep.WorstError = max(rep.WorstError, res.Error)
		if res.Outside <= Tolerance {
			rep.Within++
		}
	}
	return rep, nil
}

// Check reports whether every perturbation applies to r's pipeline: a
// known stage, a delay, a valid config of the stage or a speedup, one of
// them.
func (r *Runner) Check(perts []Perturbation) error {
	for _, p := range perts {
		if err := p.check(r.pl); err != nil {
			return err
		}
		if _, err := r.configFor(r.pl.index(p.Stage), &p); err != nil {
			return err
		}
	}
	return nil
}

// Scale implements Target: the stage's time alone at key against its own
// (AloneRatio).
func (r *Runner) Scale(ctx context.Context, stage, key string, runs int) (float64, error) {
	return r.AloneRatio(ctx, stage, key, runs)
}

// perturb runs one perturbation's pairs. The baseline iterations' spans
// are appended to spans, their end-to-end times (ms) to e2es.
func perturb(ctx context.Context, r Target, it *int, p Perturbation, spans *[]causal.Span, e2es *[]float64, opt ExperimentOptions) (Result, error) {
	idx := r.Pipeline().index(p.Stage)
	res := Result{Perturbation: p}
	if p.Config != "" {
		scale, err := r.Scale(ctx, p.Stage, p.Config, opt.Alone)
		if err != nil {
			return res, err
		}
		res.Scale = scale
	}
	var pred, meas, base, over, paused []float64
	onPath := 0
	for k := range opt.Runs {
		var b, q Iteration
		var err error
		run := func(x *Iteration, pp *Perturbation) {
			if err == nil {
				*x, err = r.Run(ctx, *it, pp)
				*it++
			}
		}
		if k%2 == 0 {
			run(&b, nil)
			run(&q, &p)
		} else {
			run(&q, &p)
			run(&b, nil)
		}
		if err != nil {
			return res, err
		}
		*spans = append(*spans, b.Spans...)
		*e2es = append(*e2es, float64(b.EndToEnd)/1e6)
		g, err := causal.Build(b.Spans)
		if err != nil {
			return res, fmt.Errorf("perturbation %q: model of the baseline: %w", p.Name, err)
		}
		if slices.Contains(g.CriticalPath(), idx) {
			onPath++
		}
		dur, err := g.Durations()
		if err != nil {
			return res, err
		}
		// The model's own baseline: the recorded end-to-end time where the
		// spans are recorded ones (a replay is exact), the replay of the
		// stage times where a harness reported only those.
		modelBase := g.Replay(dur, nil, nil)
		effect := q.EndToEnd // the perturbed iteration's time as the change counts it
		switch {
		case p.Config != "":
			dur[idx] = int64(math.Round(float64(dur[idx]) * res.Scale))
		case p.Speedup > 0:
			// The model makes the stage faster; the run made every other
			// stream slower, and its effect is its time less the pauses
			// inserted, as Coz counts it.
			dur[idx] = int64(math.Round(float64(dur[idx]) * (1 - p.Speedup)))
			effect -= q.Paused
			paused = append(paused, float64(q.Paused)/1e6)
		default:
			// The delay as inserted, as Coz accounts for its pauses as
			// they happened: a sleep wakes late on a loaded machine.
			dur[idx] += q.Delayed
			over = append(over, float64(q.Delayed-int64(p.Delay))/1e6)
		}
		predicted := g.Replay(dur, nil, nil)
		e2e := float64(b.EndToEnd)
		pred = append(pred, 100*float64(predicted-modelBase)/e2e)
		meas = append(meas, 100*float64(effect-b.EndToEnd)/e2e)
		base = append(base, e2e/1e6)
	}
	var err error
	sopt := causal.SpreadOptions{RNG: opt.RNG}
	if res.Predicted, err = causal.Bootstrap(pred, sopt); err != nil {
		return res, err
	}
	if res.Measured, err = causal.Bootstrap(meas, sopt); err != nil {
		return res, err
	}
	res.OnPath = float64(onPath) / float64(opt.Runs)
	if len(over) > 0 {
		res.OvershootMS = evaluate.Median(over)
	}
	if len(paused) > 0 {
		res.PausedMS = evaluate.Median(paused)
	}
	slices.Sort(base)
	res.BaseMS = base[len(base)/2]
	m, lo, hi := res.Predicted.Median, res.Measured.Lo, res.Measured.Hi
	res.Error = math.Abs(m - res.Measured.Median)
	res.Outside = max(0, lo-m, m-hi)
	return res, nil
}

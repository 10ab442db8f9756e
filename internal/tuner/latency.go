package tuner

import (
	"context"
	"fmt"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// DefaultLatencyRounds is how many rounds a certification measures a
// config in, each round beside the job's default.
const DefaultLatencyRounds = 6

// rounds is a certified config's latency and its speed-up over a
// baseline, measured after it was selected.
type rounds struct {
	times   []float64 // every timed run of the config, round by round
	medians []float64 // each round's median of the config
	base    []float64 // each round's median of the baseline (none without one)
	failed  string    // why a round of the config did not run; "" when all did
	baseErr string    // why a round of the baseline did not run
}

// measureRounds measures c in n rounds exactly as the search measures a
// config (t.measure: the device lock, the config's knobs, the evaluator's
// repetition rule, in the search's process), each round beside base where
// base is set, the two in turn first (ABBA...), so that what loads the
// machine in a round slows both.
func (t *Tuner) measureRounds(ctx context.Context, job Job, c, base genome.Config, n int) (rounds, error) {
	var r rounds
	for i := range n {
		order := [2]int{0, 1} // 0 is c, 1 the baseline
		if i%2 == 1 {
			order = [2]int{1, 0}
		}
		for _, which := range order {
			x := c
			if which == 1 {
				if base == nil {
					continue
				}
				x = base
			}
			tr, err := t.measure(ctx, job, x)
			if err != nil {
				return r, err
			}
			switch {
			case which == 0 && !tr.OK():
				r.failed = fmt.Sprintf("round %d: %s: %s", i+1, tr.Status, tr.Error)
				return r, nil
			case which == 0:
				r.times = append(r.times, tr.Times...)
				r.medians = append(r.medians, tr.Time)
			case !tr.OK():
				r.baseErr = fmt.Sprintf("the baseline did not run in round %d: %s: %s", i+1, tr.Status, tr.Error)
				base, r.base = nil, nil
			default:
				r.base = append(r.base, tr.Time)
			}
		}
	}
	return r, nil
}

// latencyChecks measures c (which passed its output checks) in rounds
// beside the job's default and returns its latency and the latency and
// speed-up checks for its certificate; a config that fails to run in a
// round fails the latency check.
func (t *Tuner) latencyChecks(ctx context.Context, job Job, c genome.Config, seed uint64) (certs.Latency, []certs.Check, error) {
	n := t.cfg.LatencyRounds
	base := job.Default
	var why string
	switch {
	case base == nil || !job.Space.Valid(base):
		base, why = nil, "the job has no valid default config to compare with"
	case job.Space.Key(base) == job.Space.Key(c):
		base, why = nil, "the certified config is the default"
	}
	r, err := t.measureRounds(ctx, job, c, base, n)
	if err != nil {
		return certs.Latency{}, nil, err
	}
	proto := fmt.Sprintf("%d rounds of the search's own measurement (warm-up, then runs until the median's 95%% interval is narrow), after the config was selected", n)
	lat := latency(evaluate.LatencyStats(r.times, seed))
	check := certs.Check{
		Name: "latency", Passed: r.failed == "",
		Inputs:  map[string]any{"samples": len(r.times), "rounds": len(r.medians), "protocol": proto},
		Results: map[string]any{"median_ms": lat.MedianMS, "p95_ms": lat.P95MS, "ci95_low_ms": lat.CILowMS, "ci95_high_ms": lat.CIHighMS},
	}
	if r.failed != "" {
		check.Note = "did not run: " + r.failed
	}
	speed := certs.Check{Name: "speedup"}
	switch {
	case why != "":
		speed.NotChecked = why
	case r.baseErr != "":
		speed.NotChecked = r.baseErr
	case r.failed != "":
		speed.NotChecked = "the config did not run in every round"
	default:
		ratio := evaluate.PairedRatio(r.base, r.medians)
		speed.Passed = true
		speed.Inputs = map[string]any{"baseline": job.Space.Key(base), "rounds": ratio.Rounds, "order": "interleaved, each in turn first"}
		speed.Results = map[string]any{"ratio": ratio.Ratio, "ci95_low": ratio.Low, "ci95_high": ratio.High,
			"baseline_median_ms": evaluate.Median(r.base)}
	}
	return lat, []certs.Check{check, speed}, nil
}

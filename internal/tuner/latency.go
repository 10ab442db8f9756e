package tuner

import (
	"context"
	"fmt"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// DefaultLatencyRounds is how many rounds a certification measures a
// config in, each round beside its baselines.
const DefaultLatencyRounds = 6

// baseline is a config a certified one is compared with in every round.
type baseline struct {
	check string        // the certificate check: speedup, speedup_over_served
	what  string        // "the default", "the config served before"
	c     genome.Config // nil: none, and why says why
	why   string
	times []float64 // each round's median
	err   string    // why a round of it did not run
}

// rounds is a certified config's latency, measured after it was
// selected.
type rounds struct {
	times   []float64 // every timed run of the config, round by round
	medians []float64 // each round's median of the config
	failed  string    // why a round of the config did not run; "" when all did
}

// measureRounds measures c in n rounds exactly as the search measures a
// config (t.measure: the device lock, the config's knobs, the evaluator's
// repetition rule, in the search's process), each round beside every
// baseline, the order turned by one each round, so that what loads the
// machine in a round slows all of them.
func (t *Tuner) measureRounds(ctx context.Context, job Job, c genome.Config, bases []*baseline, n int) (rounds, error) {
	var r rounds
	for i := range n {
		order := []*baseline{nil} // nil is c
		order = append(order, bases...)
		k := i % len(order)
		order = append(order[k:], order[:k]...)
		for _, b := range order {
			if b != nil && (b.c == nil || b.err != "") {
				continue
			}
			x := c
			if b != nil {
				x = b.c
			}
			tr, err := t.measure(ctx, job, x)
			if err != nil {
				return r, err
			}
			switch {
			case b == nil && !tr.OK():
				r.failed = fmt.Sprintf("round %d: %s: %s", i+1, tr.Status, tr.Error)
				return r, nil
			case b == nil:
				r.times = append(r.times, tr.Times...)
				r.medians = append(r.medians, tr.Time)
			case !tr.OK():
				b.err = fmt.Sprintf("%s did not run in round %d: %s: %s", b.what, i+1, tr.Status, tr.Error)
			default:
				b.times = append(b.times, tr.Time)
			}
		}
	}
	return r, nil
}

// latencyChecks measures c (which passed its output checks) in rounds
// beside the job's default and the config served before, and returns its
// latency and the latency and speed-up checks for its certificate; a
// config that fails to run in a round fails the latency check.
func (t *Tuner) latencyChecks(ctx context.Context, job Job, c genome.Config, seed uint64) (certs.Latency, []certs.Check, error) {
	key := job.Space.Key(c)
	def := &baseline{check: "speedup", what: "the default", c: job.Default}
	switch {
	case def.c == nil || !job.Space.Valid(def.c):
		def.c, def.why = nil, "the job has no valid default config to compare with"
	case job.Space.Key(def.c) == key:
		def.c, def.why = nil, "the certified config is the default"
	}
	bases := []*baseline{def}
	if sv, ok, err := t.cfg.Store.Served(job.Key); err != nil {
		return certs.Latency{}, nil, err
	} else if ok && sv.Key != key && (def.c == nil || sv.Key != job.Space.Key(def.c)) {
		// A promotion says how much faster than what it replaces.
		if pc, err := job.Space.ParseKey(sv.Key); err == nil && job.Space.Valid(pc) {
			bases = append(bases, &baseline{check: "speedup_over_served", what: "the config served before", c: pc})
		}
	}
	n := t.cfg.LatencyRounds
	r, err := t.measureRounds(ctx, job, c, bases, n)
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
	checks := []certs.Check{check}
	for _, b := range bases {
		checks = append(checks, speedupCheck(job, b, r))
	}
	return lat, checks, nil
}

// speedupCheck is the check of c's speed-up over b from the rounds.
func speedupCheck(job Job, b *baseline, r rounds) certs.Check {
	ch := certs.Check{Name: b.check}
	switch {
	case b.c == nil:
		ch.NotChecked = b.why
	case b.err != "":
		ch.NotChecked = b.err
	case r.failed != "":
		ch.NotChecked = "the config did not run in every round"
	default:
		ratio := evaluate.PairedRatio(b.times, r.medians)
		ch.Passed = true
		ch.Inputs = map[string]any{"baseline": job.Space.Key(b.c), "rounds": ratio.Rounds, "order": "interleaved, each in turn first"}
		ch.Results = map[string]any{"ratio": ratio.Ratio, "ci95_low": ratio.Low, "ci95_high": ratio.High,
			"baseline_median_ms": evaluate.Median(b.times)}
	}
	return ch
}

package tuner

import (
	"context"
	"crypto/ed25519"
	"slices"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// fresher gives the reduce kernel fresh "processes" in which the config
// slow runs a second longer: the search's lucky draw, as on pocl.
type fresher struct {
	evaluate.Evaluator
	evaluate.Verifier
	slow   string
	starts int
}

func (f *fresher) Fresh(ctx context.Context, p evaluate.Problem) (evaluate.Evaluator, func(), error) {
	f.starts++
	return &slowed{Evaluator: f.Evaluator, slow: f.slow}, func() {}, nil
}

type slowed struct {
	evaluate.Evaluator
	slow string
}

func (s *slowed) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	tr, err := s.Evaluator.Evaluate(ctx, c, p)
	if tr.Key == s.slow {
		tr.Time += 1000
	}
	return tr, err
}

// Certify measures the best configs again in fresh processes where the
// evaluator has them: the search's best, slow in every fresh process, is
// not the one served; with Finalists off, or an objective other than
// time, it is.
func TestCertifyConfirmsFinalists(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	_, key, _ := ed25519.GenerateKey(nil)
	tuner := func(finalists int) *Tuner {
		return New(Config{Store: st, Signer: key, Finalists: finalists, NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy {
			return evolve.NewES(s, seed, evolve.ESOptions{})
		}})
	}
	cy, err := tuner(-1).Cycle(context.Background(), job, Budget{Evals: 10}, "api", 1, nil)
	if err != nil || cy.BestKey == "" {
		t.Fatalf("cycle %+v, %v", cy, err)
	}
	best := cy.BestKey
	f := &fresher{Evaluator: job.Evaluator, Verifier: job.Evaluator.(evaluate.Verifier), slow: best}
	job.Evaluator = f
	res, err := tuner(0).Certify(context.Background(), job, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.starts != evaluate.DefaultConfirmRounds || res.Served == "" || res.Served == best {
		t.Fatalf("%d fresh processes, served %q; want %d and another config than the search's best %s", f.starts, res.Served, evaluate.DefaultConfirmRounds, best)
	}
	trials, err := st.Trials(job.Key)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, tr := range trials {
		top[tr.Key] = tr.Status == string(evaluate.StatusOK) && tr.TimeMS <= worstOfTop(trials, evaluate.DefaultFinalists)
	}
	if !top[res.Served] {
		t.Errorf("served %s, not one of the %d best of the search", res.Served, evaluate.DefaultFinalists)
	}
	f.starts = 0
	if res, err = tuner(-1).Certify(context.Background(), job, 3); err != nil || res.Served != best || f.starts != 0 {
		t.Errorf("finalists off: served %q (%v) after %d fresh processes; want the search's best %s", res.Served, err, f.starts, best)
	}
	job.Objective = evaluate.Objective{Kind: "weighted", WTime: 2}
	if res, err = tuner(0).Certify(context.Background(), job, 4); err != nil || res.Served != best || f.starts != 0 {
		t.Errorf("weighted objective: served %q (%v) after %d fresh processes; want the search's best %s", res.Served, err, f.starts, best)
	}
}

// worstOfTop is the n-th best time of the valid trials.
func worstOfTop(trials []store.Trial, n int) float64 {
	var ts []float64
	for _, tr := range trials {
		if tr.Status == string(evaluate.StatusOK) {
			ts = append(ts, tr.TimeMS)
		}
	}
	slices.Sort(ts)
	return ts[min(n, len(ts))-1]
}

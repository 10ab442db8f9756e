package tuner

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"slices"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// fresher gives the reduce kernel fresh "processes" in which the config
// slow runs a second longer (the search's lucky draw, as on pocl), and the
// configs of fixed take the times given there.
type fresher struct {
	evaluate.Evaluator
	evaluate.Verifier
	slow   string
	fixed  map[string]float64
	starts int
	fail   error // Fresh fails with it
}

func (f *fresher) Fresh(ctx context.Context, p evaluate.Problem) (evaluate.Evaluator, func(), error) {
	if f.fail != nil {
		return nil, nil, f.fail
	}
	f.starts++
	return &slowed{Evaluator: f.Evaluator, f: f}, func() {}, nil
}

type slowed struct {
	evaluate.Evaluator
	f *fresher
}

func (s *slowed) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	tr, err := s.Evaluator.Evaluate(ctx, c, p)
	if tr.Key == s.f.slow {
		tr.Time += 1000
	}
	if t, ok := s.f.fixed[tr.Key]; ok {
		tr.Time = t
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
	for _, k := range finalists(trials, evaluate.DefaultFinalists) {
		top[k] = true
	}
	if !top[res.Served] {
		t.Errorf("served %s, not one of the %d best of the search", res.Served, evaluate.DefaultFinalists)
	}
	// The served config stays first while it measures within 5% of the
	// best finalist, so noise does not switch it from cycle to cycle; it
	// gives way once another is clearly faster.
	served := res.Served
	var other string
	for _, k := range finalists(trials, evaluate.DefaultFinalists) {
		if k != served && k != best {
			other = k
		}
	}
	if other == "" {
		t.Fatalf("no third finalist besides %s and %s", served, best)
	}
	f.fixed = map[string]float64{served: 10, other: 9.7}
	if res, err = tuner(0).Certify(context.Background(), job, 3); err != nil || res.Served != served {
		t.Errorf("served %s at 10 ms, %s at 9.7: served %q (%v); want %s kept", served, other, res.Served, err, served)
	}
	f.fixed = map[string]float64{served: 10, other: 9}
	if res, err = tuner(0).Certify(context.Background(), job, 3); err != nil || res.Served != other {
		t.Errorf("served %s at 10 ms, %s at 9: served %q (%v); want %s", served, other, res.Served, err, other)
	}
	f.fixed = nil
	f.starts = 0
	if res, err = tuner(-1).Certify(context.Background(), job, 3); err != nil || res.Served != best || f.starts != 0 {
		t.Errorf("finalists off: served %q (%v) after %d fresh processes; want the search's best %s", res.Served, err, f.starts, best)
	}
	// A device busy with other work: the search's order stands; idle, the
	// finalists are measured.
	for _, busy := range []bool{true, false} {
		f.starts = 0
		tn := New(Config{Store: st, Signer: key,
			Busy: func(string) string {
				if busy {
					return "other work"
				}
				return ""
			},
			NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }})
		res, err = tn.Certify(context.Background(), job, 3)
		if want := map[bool]int{true: 0, false: evaluate.DefaultConfirmRounds}[busy]; err != nil || f.starts != want || (busy && res.Served != best) {
			t.Errorf("device busy %v: served %q (%v) after %d fresh processes; want %d (and the search's best %s when busy)", busy, res.Served, err, f.starts, want, best)
		}
	}
	f.starts = 0
	// A worker that cannot start: the search's order stands.
	f.fail = errors.New("no worker")
	if res, err = tuner(0).Certify(context.Background(), job, 4); err != nil || res.Served != best {
		t.Errorf("no fresh process: served %q (%v); want the search's best %s", res.Served, err, best)
	}
	f.fail = nil
	job.Objective = evaluate.Objective{Kind: "weighted", WTime: 2}
	if res, err = tuner(0).Certify(context.Background(), job, 5); err != nil || res.Served != best || f.starts != 0 {
		t.Errorf("weighted objective: served %q (%v) after %d fresh processes; want the search's best %s", res.Served, err, f.starts, best)
	}
}

// finalists are the keys of the n best valid trials in the order Certify
// takes them: a stable sort by time, so of two trials measured alike the
// one stored first (a threshold on the n-th time would let a tie in).
func finalists(trials []store.Trial, n int) []string {
	var ok []store.Trial
	for _, tr := range trials {
		if tr.Status == string(evaluate.StatusOK) {
			ok = append(ok, tr)
		}
	}
	slices.SortStableFunc(ok, func(a, b store.Trial) int { return cmp.Compare(a.TimeMS, b.TimeMS) })
	var keys []string
	for _, tr := range ok[:min(n, len(ok))] {
		keys = append(keys, tr.Key)
	}
	return keys
}

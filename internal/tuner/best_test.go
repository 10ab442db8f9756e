package tuner

import (
	"context"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// listed asks for its configs in order, then for nothing.
type listed struct {
	evolve.Strategy // only for the interface's encoding methods
	cfgs            []genome.Config
}

func (l *listed) Name() string { return "listed" }
func (l *listed) Ask(n int) ([]genome.Config, error) {
	n = min(n, len(l.cfgs))
	out := l.cfgs[:n]
	l.cfgs = l.cfgs[n:]
	return out, nil
}
func (l *listed) Tell([]evolve.Result) error     { return nil }
func (l *listed) MarshalBinary() ([]byte, error) { return []byte{}, nil }
func (l *listed) UnmarshalBinary(b []byte) error { return nil }

// fastest makes the configs of fast the fastest the search measures.
type fastest struct {
	evaluate.Evaluator
	evaluate.Verifier
	fast string // configs whose key holds it
}

func (f *fastest) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	tr, err := f.Evaluator.Evaluate(ctx, c, p)
	if strings.Contains(tr.Key, f.fast) && tr.OK() {
		tr.Time /= 100
	}
	return tr, err
}

// A cycle whose fastest trial fails its checks names as its best the
// fastest that passed, in the cycle it returns and in the store.
func TestBestPassed(t *testing.T) {
	k, p, sp := wrongVariant(t)
	var wrong, right []genome.Config
	for _, c := range sp.All() {
		key := sp.Key(c)
		switch {
		case strings.Contains(key, ",ikj_fast,") && len(wrong) < 1:
			wrong = append(wrong, c)
		case strings.Contains(key, ",ikj,") && len(right) < 2:
			right = append(right, c)
		}
	}
	if len(wrong) == 0 || len(right) < 2 {
		t.Fatalf("space has %d wrong and %d right configs", len(wrong), len(right))
	}
	st := storetest.New(t)
	tn := New(Config{Store: st, Signer: signer(t), NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy {
		return &listed{cfgs: append(append([]genome.Config{}, right...), wrong...)}
	}})
	job := Job{Key: store.JobKey{Kernel: "sgemm", SpecHash: "t", Problem: p.String(), Device: k.Device()}, Problem: p,
		Evaluator: &fastest{Evaluator: k, Verifier: k, fast: ",ikj_fast,"}, Space: sp}
	cy, err := tn.Cycle(context.Background(), job, Budget{Evals: 3}, "api", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := sp.Key(wrong[0])
	trials, _ := st.Trials(job.Key)
	status := map[string]string{}
	for _, tr := range trials {
		status[tr.Key] = tr.Status
	}
	if status[bad] != string(evaluate.StatusWrongResult) {
		t.Fatalf("the wrong variant %s is %q, want wrong_result: the test proves nothing", bad, status[bad])
	}
	stored, _ := st.Cycles(job.Key)
	for _, c := range append(stored, cy) {
		if c.BestKey == "" || status[c.BestKey] != "ok" {
			t.Errorf("cycle %d's best is %q (%q), want a config that passed", c.ID, c.BestKey, status[c.BestKey])
		}
	}
}

// rebest moves the best of an earlier cycle off a config found wrong later.
func TestRebestEarlierCycle(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	tn := newTuner(st)
	cy, err := st.NewCycle(job.Key, store.Cycle{Trigger: "api", State: "done", BestKey: "a", BestMS: 1})
	if err != nil {
		t.Fatal(err)
	}
	trials := []store.Trial{
		{Key: "a", Status: "ok", TimeMS: 1, Cycle: cy.ID},
		{Key: "b", Status: "ok", TimeMS: 3, Cycle: cy.ID},
		{Key: "c", Status: "ok", TimeMS: 2, Cycle: cy.ID},
		{Key: "d", Status: "ok", TimeMS: 0.5, Cycle: cy.ID + 1},
		{Key: "e", Status: "invalid", TimeMS: 0.1, Cycle: cy.ID},
	}
	if err := tn.rebest(job, trials, map[string]bool{"a": true}); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Cycles(job.Key)
	if len(got) != 1 || got[0].BestKey != "c" || got[0].BestMS != 2 {
		t.Fatalf("cycles %+v, want best c at 2 ms", got)
	}
}

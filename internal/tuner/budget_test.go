package tuner

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store/storetest"
)

// TestCertificateRecordsBudget tunes reduce under an error budget, with
// its reduced precisions open: the served config's certificate holds a
// passed error_budget check with the precision map, each stage's bound,
// the composed bound and the measured error, both within the budget.
func TestCertificateRecordsBudget(t *testing.T) {
	st := storetest.New(t)
	key := signer(t)
	tn := New(Config{Store: st, Signer: key, NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }})
	job := reduceJob(t)
	sp, err := job.Evaluator.(interface {
		Space(evaluate.Problem) (*genome.Space, error)
	}).Space(job.Problem)
	if err != nil {
		t.Fatal(err)
	}
	// float64 accumulation, any input: only fp32 input fits 1e-5 on
	// inputs of both signs (their sum is ~1000 times smaller than Σ|a|).
	if job.Space, err = sp.Restrict([]string{`acc == "float64"`}, nil); err != nil {
		t.Fatal(err)
	}
	job.Default = job.Space.Default()
	job.Verify.Budget = evaluate.ErrorBudget{Kind: evaluate.ToleranceRel, Value: 1e-5}
	if _, err := tn.Cycle(context.Background(), job, Budget{Evals: 12}, "api", 1, nil); err != nil {
		t.Fatal(err)
	}
	sv, ok, _ := st.Served(job.Key)
	if !ok || sv.Certificate == "" {
		t.Fatalf("served = %+v", sv)
	}
	body, _, err := st.Cert(sv.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	c, err := certs.VerifyBytes(body, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	var ch *certs.Check
	for i := range c.Checks {
		if c.Checks[i].Name == "error_budget" {
			ch = &c.Checks[i]
		}
	}
	if ch == nil || !ch.Passed {
		t.Fatalf("certificate of %s has error_budget check %+v", sv.Key, ch)
	}
	pm, _ := ch.Inputs["precision_map"].(map[string]any)
	if pm["acc"] != "float64" || pm["input"] != "fp32" {
		t.Errorf("precision map %v, want acc float64 and input fp32", pm)
	}
	bound, _ := ch.Results["bound"].(float64)
	meas, _ := ch.Results["measured_err"].(float64)
	stages, _ := ch.Results["stages"].([]any)
	if !(bound > 0 && bound <= 1e-5 && meas <= 1e-5) || len(stages) < 3 {
		t.Errorf("error_budget results %v", ch.Results)
	}
}

// TestBudgetNotCheckedFails: an evaluator that cannot bound the error
// (here a budget check with nothing checked) fails the check.
func TestBudgetNotCheckedFails(t *testing.T) {
	ch := budgetCheck(evaluate.ErrorBudget{Kind: "rel", Value: 1e-5}, evaluate.BudgetResult{NotChecked: "no outputs"})
	c := &certs.Certificate{Checks: []certs.Check{{Name: "parity", Passed: true}, ch}}
	if ch.Passed || c.Passed() {
		t.Errorf("unchecked budget: check %+v, certificate passed %v", ch, c.Passed())
	}
}

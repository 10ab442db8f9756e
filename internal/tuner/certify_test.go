package tuner

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

func signer(t testing.TB) ed25519.PrivateKey {
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// wrongVariant is the builtin sgemm with its test-only wrong variant, at
// a problem where it is wrong, and its space there.
func wrongVariant(t testing.TB) (*builtin.Kernel, evaluate.Problem, *genome.Space) {
	k, err := builtin.New("sgemm", builtin.Options{TestWrongVariant: true, Reps: evaluate.Reps{Min: 1, Max: 3}})
	if err != nil {
		t.Fatal(err)
	}
	p := evaluate.Problem{Dims: []int{100, 72, 64}}
	sp, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	// B in fp32, as a spec without an error budget keeps it.
	if sp, err = sp.Restrict([]string{`b_input == 'fp32'`}, nil); err != nil {
		t.Fatal(err)
	}
	return k, p, sp
}

// The builtin sgemm's test-only "ikj_fast" loop order drops the last partial
// row tile: fast, and wrong whenever m is not a multiple of tile_m. Over 200
// seeded cycles on such a problem it is never served, and every trial of it
// that was faster than the served config is recorded as wrong_result.
func TestWrongVariantNeverServed(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: 200 cycles")
	}
	k, p, sp := wrongVariant(t)
	key := signer(t)
	measuredWrong, rejected := 0, 0
	cycles := uint64(200)
	if raceEnabled {
		cycles = 20
	}
	for seed := uint64(1); seed <= cycles; seed++ {
		st := storetest.New(t)
		tn := New(Config{Store: st, Signer: key, NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy {
			// Random search: it finds the wrong variant as often as any other value.
			return evolve.NewRandom(s, seed)
		}})
		job := Job{Key: store.JobKey{Kernel: "sgemm", SpecHash: "t", Problem: p.String(), Device: k.Device()}, Problem: p, Evaluator: k, Space: sp, Default: sp.Default()}
		cy, err := tn.Cycle(context.Background(), job, Budget{Evals: 12}, "api", seed, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		sv, ok, _ := st.Served(job.Key)
		if ok && strings.Contains(sv.Key, ",ikj_fast,") {
			t.Fatalf("seed %d: the wrong variant %s is served", seed, sv.Key)
		}
		if !ok || sv.Certificate == "" || cy.Promoted != sv.Key {
			trials, _ := st.Trials(job.Key)
			for _, tr := range trials {
				t.Logf("%s %s %.4f %s", tr.Key, tr.Status, tr.TimeMS, tr.Error)
			}
			t.Fatalf("seed %d: served %+v, promoted %q: want a certified config", seed, sv, cy.Promoted)
		}
		trials, _ := st.Trials(job.Key)
		servedMS := 0.0 // the search's time of the served config (its served time is its certificate's)
		for _, tr := range trials {
			if tr.Key == sv.Key {
				servedMS = tr.TimeMS
			}
		}
		for _, tr := range trials {
			if !strings.Contains(tr.Key, ",ikj_fast,") {
				continue
			}
			measuredWrong++
			if tr.Status == string(evaluate.StatusWrongResult) {
				rejected++
			} else if tr.Status == "ok" && tr.TimeMS < servedMS {
				t.Errorf("seed %d: wrong variant %s (%.3f ms) beat the served %s but is %q, not wrong_result", seed, tr.Key, tr.TimeMS, sv.Key, tr.Status)
			}
		}
	}
	t.Logf("%d cycles: %d trials of the wrong variant measured, %d rejected by verification, none served", cycles, measuredWrong, rejected)
	if rejected == 0 {
		t.Errorf("the wrong variant was never a candidate: the test proves nothing")
	}
}

func TestCertificateSigned(t *testing.T) {
	st := storetest.New(t)
	key := signer(t)
	tn := New(Config{Store: st, Signer: key, NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }})
	job := reduceJob(t)
	if _, err := tn.Cycle(context.Background(), job, Budget{Evals: 6}, "api", 1, nil); err != nil {
		t.Fatal(err)
	}
	sv, ok, _ := st.Served(job.Key)
	if !ok || sv.Certificate == "" {
		t.Fatalf("served = %+v", sv)
	}
	body, meta, err := st.Cert(sv.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	c, err := certs.VerifyBytes(body, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatalf("stored certificate does not verify: %v", err)
	}
	// parity, determinism, error_bound, constraints, latency, speedup
	if c.Key != sv.Key || meta.Key != sv.Key || !c.Passed() || len(c.Checks) != 6 {
		t.Errorf("certificate %+v for served %s", c, sv.Key)
	}
}

// A served config marked stale by drift, and still the best at the next
// certification (a drift cycle that finds nothing better), is verified
// again: it is served under a new certificate, promoted anew, and the
// stale mark is gone.
func TestStaleConfigReverified(t *testing.T) {
	st := storetest.New(t)
	key := signer(t)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tn := New(Config{Store: st, Signer: key, Now: func() time.Time { clock = clock.Add(time.Second); return clock },
		NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }})
	job := reduceJob(t)
	if _, err := tn.Cycle(context.Background(), job, Budget{Evals: 6}, "api", 1, nil); err != nil {
		t.Fatal(err)
	}
	old, ok, _ := st.Served(job.Key)
	if !ok || old.Certificate == "" {
		t.Fatalf("served = %+v", old)
	}
	stale := old
	stale.Stale, stale.StaleAt = "drift: test", clock
	if err := st.PutServed(job.Key, stale); err != nil {
		t.Fatal(err)
	}
	res, err := tn.Certify(context.Background(), job, 2)
	if err != nil {
		t.Fatal(err)
	}
	sv, ok, _ := st.Served(job.Key)
	if !ok || res.Served != old.Key || sv.Key != old.Key {
		t.Fatalf("served %+v after re-certification, want %s kept", sv, old.Key)
	}
	if sv.Stale != "" || !sv.StaleAt.IsZero() {
		t.Errorf("re-verified config still stale: %q since %v", sv.Stale, sv.StaleAt)
	}
	if sv.Certificate == old.Certificate || res.Cert != sv.Certificate {
		t.Errorf("certificate %s (result %s), want a new one, not the drifted %s", sv.Certificate, res.Cert, old.Certificate)
	}
	if !sv.PromotedAt.After(stale.StaleAt) || sv.Cycle != 2 {
		t.Errorf("promoted at %v by cycle %d; want after the drift (%v), by cycle 2", sv.PromotedAt, sv.Cycle, stale.StaleAt)
	}
	// A config that is not stale keeps its certificate and record.
	if _, err := tn.Certify(context.Background(), job, 3); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := st.Served(job.Key); again.Certificate != sv.Certificate || !again.PromotedAt.Equal(sv.PromotedAt) {
		t.Errorf("fresh served config re-certified: %+v, was %+v", again, sv)
	}
}

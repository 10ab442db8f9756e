package tuner

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// A config tuned at a problem where it is right can be wrong at another:
// the test-only "ikj_fast" sgemm drops the last partial row tile, so it is
// right where tile_m divides m (64) and wrong at m = 100. VerifyAt finds
// that by parity at 100 and records it there; a right config passes and
// is certified at 100.
func TestVerifyAt(t *testing.T) {
	k, p, sp := wrongVariant(t)
	pick := func(order string) string {
		for _, c := range sp.All() {
			m := sp.ConfigMap(c)
			if m["loop_order"] == order && fmt.Sprint(m["tile_m"]) == "32" {
				return sp.Key(c)
			}
		}
		t.Fatalf("no %s config with tile_m 32", order)
		return ""
	}
	st := storetest.New(t)
	key := signer(t)
	tn := New(Config{Store: st, Signer: key, NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return nil }})
	job := Job{Key: store.JobKey{Kernel: "sgemm", SpecHash: "t", Problem: p.String(), Device: k.Device()}, Problem: p, Evaluator: k, Space: sp, Default: sp.Default()}
	ctx := context.Background()

	wrong := pick("ikj_fast")
	v, err := tn.VerifyAt(ctx, job, wrong)
	if err != nil || v.Passed || !strings.Contains(v.Why, "parity") {
		t.Fatalf("VerifyAt(%s) = %+v, %v; want failed parity", wrong, v, err)
	}
	trials, err := st.Trials(job.Key)
	if err != nil || len(trials) != 1 || trials[0].Key != wrong || trials[0].Status != string(evaluate.StatusWrongResult) {
		t.Errorf("trials at %s = %+v, %v; want %s wrong_result", p, trials, err, wrong)
	}
	if metas, _ := st.JobCerts(job.Key); len(metas) != 0 {
		t.Errorf("a failed config got certificates %+v", metas)
	}

	right := pick("ikj")
	v, err = tn.VerifyAt(ctx, job, right)
	if err != nil || !v.Passed || v.Cert == "" || !(v.TimeMS > 0) {
		t.Fatalf("VerifyAt(%s) = %+v, %v; want passed", right, v, err)
	}
	body, meta, err := st.Cert(v.Cert)
	if err != nil || meta.Job != job.Key || meta.Key != right {
		t.Fatalf("certificate %s = %+v, %v", v.Cert, meta, err)
	}
	cert, err := certs.VerifyBytes(body, key.Public().(ed25519.PublicKey))
	if err != nil || cert.Job.Problem != p.String() || !cert.Passed() {
		t.Errorf("certificate of %s: %+v, %v; want passed at %s", right, cert, err, p)
	}
	if _, ok, _ := st.Served(job.Key); ok {
		t.Error("VerifyAt served a config")
	}

	// Not a config of this problem's space: rejected without running.
	if v, err := tn.VerifyAt(ctx, job, "nonsense"); err != nil || v.Passed || !strings.HasPrefix(v.Why, "not a config of problem 100,72,64") {
		t.Errorf("VerifyAt(nonsense) = %+v, %v; want rejected", v, err)
	}
	// A recording has no outputs to check; without a key nothing is signed.
	if _, err := tn.VerifyAt(ctx, Job{Key: job.Key, Evaluator: &replay.Recording{}, Space: sp}, right); !errors.Is(err, ErrNotVerifiable) {
		t.Errorf("VerifyAt on a recording: %v, want ErrNotVerifiable", err)
	}
	if _, err := New(Config{Store: st, NewStrategy: tn.cfg.NewStrategy}).VerifyAt(ctx, job, right); !errors.Is(err, ErrNoSigner) {
		t.Errorf("VerifyAt without a key: %v, want ErrNoSigner", err)
	}
}

// Recheck runs VerifyAt's checks and signs nothing: a right config passes
// and leaves the store as it was, a wrong one is recorded wrong_result.
func TestRecheck(t *testing.T) {
	k, p, sp := wrongVariant(t)
	pick := func(order string) string {
		for _, c := range sp.All() {
			if m := sp.ConfigMap(c); m["loop_order"] == order && fmt.Sprint(m["tile_m"]) == "32" {
				return sp.Key(c)
			}
		}
		t.Fatalf("no %s config with tile_m 32", order)
		return ""
	}
	st := storetest.New(t)
	tn := New(Config{Store: st, NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return nil }})
	job := Job{Key: store.JobKey{Kernel: "sgemm", SpecHash: "t", Problem: p.String(), Device: k.Device()}, Problem: p, Evaluator: k, Space: sp, Default: sp.Default()}
	ctx := context.Background()
	if v, err := tn.Recheck(ctx, job, pick("ikj")); err != nil || !v.Passed || v.Cert != "" || !(v.TimeMS > 0) {
		t.Fatalf("Recheck(ikj) = %+v, %v; want passed, no certificate", v, err)
	}
	if trials, _ := st.Trials(job.Key); len(trials) != 0 {
		t.Errorf("a passed recheck stored trials %+v", trials)
	}
	wrong := pick("ikj_fast")
	if v, err := tn.Recheck(ctx, job, wrong); err != nil || v.Passed || !strings.Contains(v.Why, "parity") {
		t.Fatalf("Recheck(%s) = %+v, %v; want failed parity", wrong, v, err)
	}
	if trials, _ := st.Trials(job.Key); len(trials) != 1 || trials[0].Status != string(evaluate.StatusWrongResult) {
		t.Errorf("trials after a failed recheck: %+v", trials)
	}
	if metas, _ := st.JobCerts(job.Key); len(metas) != 0 {
		t.Errorf("Recheck stored certificates %+v", metas)
	}
}

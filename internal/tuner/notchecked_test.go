package tuner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/harness"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// syntheticReplayJob is a job replaying evaluate/replay's synthetic
// energy recording.
func syntheticReplayJob(t *testing.T) Job {
	t.Helper()
	rec, err := replay.Load("../../evaluate/replay/testdata/synthetic_energy.json")
	if err != nil {
		t.Fatal(err)
	}
	p := evaluate.Problem{Dims: rec.Problem}
	sp, err := rec.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	return Job{Key: store.JobKey{Kernel: "e", SpecHash: "h", Problem: p.String(), Device: rec.Device()}, Problem: p, Evaluator: rec, Space: sp, Default: sp.Default()}
}

// servedCert certifies job's one stored ok trial and returns the verified
// certificate and its report.
func servedCert(t *testing.T, job Job, tr store.Trial) (*certs.Certificate, string) {
	t.Helper()
	st := storetest.New(t)
	key := signer(t)
	tn := New(Config{Store: st, Signer: key, NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }})
	if _, err := st.AddTrials(job.Key, []store.Trial{tr}); err != nil {
		t.Fatal(err)
	}
	res, err := tn.Certify(context.Background(), job, 1)
	if err != nil || res.Cert == "" {
		t.Fatalf("Certify = %+v, %v", res, err)
	}
	body, _, err := st.Cert(res.Cert)
	if err != nil {
		t.Fatal(err)
	}
	c, err := certs.VerifyBytes(body, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	var rep bytes.Buffer
	if err := c.Report(&rep); err != nil {
		t.Fatal(err)
	}
	return c, rep.String()
}

// checkNotMade requires the named checks to be recorded as not made (not
// passed, with a reason) and the report to say so, not PASS.
func checkNotMade(t *testing.T, c *certs.Certificate, report string, names ...string) {
	t.Helper()
	byName := map[string]certs.Check{}
	for _, ch := range c.Checks {
		byName[ch.Name] = ch
	}
	for _, n := range names {
		ch, ok := byName[n]
		if !ok || ch.Passed || ch.NotChecked == "" {
			t.Errorf("check %s = %+v (present %v), want not passed, with why it was not made", n, ch, ok)
		}
		if !strings.Contains(report, "NOT CHECKED "+n+"\n") || strings.Contains(report, "PASS "+n+"\n") {
			t.Errorf("report does not show %s as NOT CHECKED:\n%s", n, report)
		}
	}
	if !c.Passed() {
		t.Errorf("certificate with its made checks passed: Passed() = false")
	}
}

// An exec harness reports a checksum: its certificate checks parity against
// the default's checksum and determinism, and records the error bound as
// not made, never as passed.
func TestHarnessCertificateErrorBoundNotChecked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fake harness")
	}
	bin := filepath.Join(t.TempDir(), "fakeharness")
	if out, err := exec.Command("go", "build", "-o", bin, "../../evaluate/harness/testdata/fakeharness").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	h, err := harness.Start(harness.Options{Command: []string{bin}, Timeout: 5 * time.Second, Reps: evaluate.Reps{Max: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	p := evaluate.Problem{Dims: []int{64}}
	sp, err := h.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sp.ParseKey("ok,4")
	if err != nil {
		t.Fatal(err)
	}
	job := Job{Key: store.JobKey{Kernel: "fake", SpecHash: "h", Problem: p.String(), Device: h.Device()}, Problem: p, Evaluator: h, Space: sp, Default: sp.Default()}
	cert, report := servedCert(t, job, store.Trial{Key: sp.Key(c), Status: "ok", TimeMS: 1, TimesMS: []float64{1, 1, 1}, At: time.Now()})
	checkNotMade(t, cert, report, "error_bound")
	if !strings.Contains(report, "PASS parity\n") || !strings.Contains(report, "(5 of 5 checks made passed; 1 not made)") {
		t.Errorf("report:\n%s", report)
	}
}

// A replayed recording has no outputs: parity, determinism and the error
// bound are listed as not made.
func TestReplayCertificateChecksNotMade(t *testing.T) {
	job := syntheticReplayJob(t)
	tr, err := job.Evaluator.Evaluate(context.Background(), job.Default, job.Problem)
	if err != nil || !tr.OK() {
		t.Fatalf("Evaluate(default) = %+v, %v", tr, err)
	}
	cert, report := servedCert(t, job, store.Trial{Key: tr.Key, Status: "ok", TimeMS: tr.Time, TimesMS: tr.Times, At: time.Now()})
	checkNotMade(t, cert, report, "parity", "determinism", "error_bound")
	if !strings.Contains(report, "PASS constraints\n") || !strings.Contains(report, "(1 of 1 checks made passed; 3 not made)") {
		t.Errorf("report:\n%s", report)
	}
}

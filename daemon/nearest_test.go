package daemon

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
	"github.com/quasim/quasim/internal/tuner"
)

// nearestServer serves a reduce spec tuned at 4096 and 65536, whose
// served configs were certified there by the real tuner: at 65536 one with
// block 65536, which no problem under 65536 admits, at 4096 one with block
// 1024. Its scheduler runs (no cycle is due), so verifications run.
// The spec lists the untuned problems too, with nothing tuned there.
func nearestServer(t *testing.T, untuned ...string) (*testServer, ed25519.PublicKey) {
	t.Helper()
	dir := t.TempDir()
	problems := `"4096", "65536"`
	for _, p := range untuned {
		problems += `, "` + p + `"`
	}
	spec := "name: reduce\nevaluator: builtin:reduce\nproblems: [" + problems + "]\nschedule: \"@every 1h\"\nbudget: {evals: 4}\n"
	if err := os.WriteFile(filepath.Join(dir, "reduce.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.New(t)
	sched := &scheduler{
		dir: dir, st: st, cron: newCron(), log: zerolog.Nop(), clock: time.Now,
		tn: tuner.New(tuner.Config{Store: st, NewStrategy: defaultStrategy, Signer: key}),
	}
	sched.checks.every = map[string]time.Duration{"reduce": 0}
	ts := serveTest(t, sched, st)
	ctx, cancel := context.WithCancel(context.Background())
	sched.start(ctx, func() {})
	t.Cleanup(func() {
		cancel()
		sched.stop(time.Now().Add(time.Minute))
	})
	k, _ := sched.kernel("reduce")
	for _, j := range k.jobs {
		block := map[string]string{"4096": "1024", "65536": "65536"}[j.key.Problem]
		if block == "" {
			continue // untuned
		}
		var pick string
		for _, c := range j.spec.Space.All() {
			m := j.spec.Space.ConfigMap(c)
			if fmt.Sprint(m["block"]) == block && fmt.Sprint(m["acc"]) == "float64" && fmt.Sprint(m["workers"]) == "1" {
				pick = j.spec.Space.Key(c)
				break
			}
		}
		if pick == "" {
			t.Fatalf("no config with block %s at %s", block, j.key.Problem)
		}
		tr := store.Trial{Key: pick, Status: "ok", TimeMS: 0.5, TimesMS: []float64{0.5}, At: time.Now()}
		if _, err := st.AddTrials(j.key, []store.Trial{tr}); err != nil {
			t.Fatal(err)
		}
		res, err := sched.tn.Certify(ctx, tunerJob(k.spec, j.key, j.spec), 0)
		if err != nil || res.Served != pick {
			t.Fatalf("certify %s at %s: %+v, %v", pick, j.key.Problem, res, err)
		}
	}
	sched.changed()
	return ts, pub
}

// lookup GETs the config of reduce at problem; with etag, it long-polls
// until the answer changes.
func (ts *testServer) lookup(t *testing.T, problem, etag string) (api.Config, string) {
	t.Helper()
	url := "http://quasimd/v1/configs/reduce?problem=" + problem
	req, _ := http.NewRequest("GET", url, nil)
	if etag != "" {
		req, _ = http.NewRequest("GET", url+"&wait=60s", nil)
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusNotModified {
		return ts.lookup(t, problem, "")
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, body)
	}
	var c api.Config
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c, resp.Header.Get("Etag")
}

// settled long-polls the answer at problem until its verification is no
// longer pending.
func (ts *testServer) settled(t *testing.T, problem string) api.Config {
	t.Helper()
	c, etag := ts.lookup(t, problem, "")
	for deadline := time.Now().Add(2 * time.Minute); c.Verification == api.VerifyPending; {
		if time.Now().After(deadline) {
			t.Fatalf("verification at %s still pending: %+v", problem, c)
		}
		c, etag = ts.lookup(t, problem, etag)
	}
	return c
}

func TestNearestVerifiedAtProblem(t *testing.T) {
	ts, pub := nearestServer(t)
	// 20000 is nearest to 65536, whose config (block 65536) is not one of
	// 20000's: the constraints at 20000 rule it out, so it is never
	// answered there, not even while a verification waits; the answer is
	// 4096's, which is verified and certified at 20000.
	far, _ := ts.lookup(t, "65536", "")
	first, _ := ts.lookup(t, "20000", "")
	if first.Match != api.MatchNearest || first.From != "4096" || first.CertifiedFor != "4096" ||
		first.Certificate == "" || first.Verification != api.VerifyPending {
		t.Fatalf("first answer at 20000 = %+v, want nearest from 4096, certified for 4096, verification pending", first)
	}
	why := "config " + far.Key + " of 65536 failed verification at 20000: not a valid config at this problem"
	if !strings.Contains(first.Note, why) {
		t.Errorf("note = %q, want why 65536's config is not answered", first.Note)
	}
	got := ts.settled(t, "20000")
	if got.Match != api.MatchNearest || got.From != "4096" || got.Verification != api.VerifyPassed ||
		got.CertifiedFor != "20000" || got.Certificate == "" || !(got.TimeMS > 0) {
		t.Fatalf("after verification = %+v, want nearest from 4096, passed and certified for 20000", got)
	}
	if !strings.Contains(got.Note, why) {
		t.Errorf("note = %q, want why 65536's config is not answered", got.Note)
	}
	at := store.JobKey{Kernel: "reduce", SpecHash: got.SpecHash, Problem: "20000", Device: got.Device}
	views, err := ts.st.ServedViews([]store.JobKey{at}, [][]string{{far.Key}})
	if err != nil {
		t.Fatal(err)
	}
	if tr, ok := views[0].Trials[far.Key]; ok {
		t.Errorf("65536's config was run at 20000: %+v", tr)
	}
	// The certificate is 20000's, signed, and says what was checked there.
	body, meta, err := ts.st.Cert(got.Certificate)
	if err != nil || meta.Job != at || meta.Key != got.Key {
		t.Fatalf("certificate %s: %+v, %v; want one of %s for %s", got.Certificate, meta, err, at, got.Key)
	}
	cert, err := certs.VerifyBytes(body, pub)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Job.Problem != "20000" || !cert.Passed() {
		t.Errorf("certificate of problem %s, passed %v; want 20000, passed", cert.Job.Problem, cert.Passed())
	}
	if i := slices.IndexFunc(cert.Checks, func(c certs.Check) bool { return c.Name == "parity" }); i < 0 || !cert.Checks[i].Passed {
		t.Errorf("certificate checks %+v: want parity made and passed", cert.Checks)
	}
	// It is not verified again, and the exact problems are untouched.
	again, _ := ts.lookup(t, "20000", "")
	if again.Certificate != got.Certificate || again.Verification != api.VerifyPassed {
		t.Errorf("second lookup = %+v, want the same certificate", again)
	}
	exact, _ := ts.lookup(t, "4096", "")
	if exact.Match != api.MatchExact || exact.CertifiedFor != "4096" || exact.Verification != "" {
		t.Errorf("exact answer = %+v, want certified for 4096 and no verification", exact)
	}
}

// A problem whose own job has served nothing and runs no cycle is answered
// from the nearest, saying that the job waits for its schedule and when
// it runs; before, the answer said "tuning" for hours while nothing ran.
func TestNearestWhileJobWaits(t *testing.T) {
	ts, _ := nearestServer(t, "16384")
	got, _ := ts.lookup(t, "16384", "")
	if got.Match != api.MatchNearest || got.From != "4096" {
		t.Fatalf("answer at 16384 = %+v, want nearest from 4096", got)
	}
	next := time.Now().Add(time.Hour)
	if !strings.HasPrefix(got.Verification, api.VerifyWaiting+"its job's next cycle is at ") || !strings.Contains(got.Verification, "(its schedule)") {
		t.Fatalf("verification = %q, want waiting for its schedule", got.Verification)
	}
	at, err := time.Parse(time.RFC3339, strings.Fields(strings.TrimPrefix(got.Verification, api.VerifyWaiting+"its job's next cycle is at "))[0])
	if err != nil || at.Sub(next).Abs() > time.Minute {
		t.Errorf("next cycle at %v (%v), want about %v (@every 1h)", at, err, next)
	}
}

func TestNearestVerificationBounded(t *testing.T) {
	ts, _ := nearestServer(t)
	// Over the largest problem the spec lists: answered, never verified.
	c, _ := ts.lookup(t, "1000000", "")
	if c.Match != api.MatchNearest || c.CertifiedFor != "65536" || !strings.HasPrefix(c.Verification, api.VerifyRefused) ||
		!strings.Contains(c.Verification, "on_miss.max_problem") {
		t.Fatalf("answer over the bounds = %+v, want nearest, certified for 65536, refused by on_miss", c)
	}
	keys, err := ts.st.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Problem == "1000000" {
			t.Errorf("a lookup over the bounds stored job %s", k)
		}
	}
}

func TestNearestRevokedAtProblem(t *testing.T) {
	ts, _ := nearestServer(t)
	ts.lookup(t, "8192", "")
	got := ts.settled(t, "8192")
	if got.Verification != api.VerifyPassed || got.From != "4096" {
		t.Fatalf("answer at 8192 = %+v, want 4096's config, passed", got)
	}
	resp, err := ts.client.Post("http://quasimd/v1/certs/"+got.Certificate+"/revoke", "application/json", strings.NewReader(`{"reason": "test"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("revoke = %d", resp.StatusCode)
	}
	// 65536's config is not one of 8192's either: with both out, the
	// default, saying why.
	c := ts.settled(t, "8192")
	if c.Match != api.MatchDefault || !strings.Contains(c.Note, "revoked: test") || !strings.Contains(c.Note, "of 65536 failed verification at 8192: not a valid config at this problem") {
		t.Errorf("after revoking its certificate at 8192: %+v, want the default and why", c)
	}
}

func TestNearestVerificationQueueBounded(t *testing.T) {
	ts, _ := nearestServer(t)
	c := &ts.sched.checks
	c.mu.Lock()
	c.every["reduce"] = time.Hour // the first runs, the others wait
	c.mu.Unlock()
	for i := range maxCheckQueue + 1 {
		p := fmt.Sprint(5000 + i)
		if got, _ := ts.lookup(t, p, ""); got.Verification != api.VerifyPending {
			t.Fatalf("lookup %d at %s: verification %q, want pending", i, p, got.Verification)
		}
	}
	got, _ := ts.lookup(t, "6000", "")
	if want := fmt.Sprintf("refused: %d verifications are queued for kernel reduce, the most", maxCheckQueue); got.Verification != want {
		t.Errorf("verification past the queue = %q, want %q", got.Verification, want)
	}
}

func TestNearestVerificationProblemsBounded(t *testing.T) {
	ts, _ := nearestServer(t)
	k, _ := ts.sched.kernel("reduce")
	for i := range maxMissJobs {
		key := k.jobs[0].key
		key.Problem = fmt.Sprint(5000 + i)
		if _, err := ts.st.AddTrials(key, []store.Trial{{Key: "x", Status: "ok", TimeMS: 1, At: time.Now()}}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := ts.lookup(t, "20000", "")
	if want := fmt.Sprintf("refused: kernel reduce has records at %d problems it does not list, the most", maxMissJobs); got.Verification != want {
		t.Errorf("verification past %d unlisted problems = %q, want %q", maxMissJobs, got.Verification, want)
	}
}

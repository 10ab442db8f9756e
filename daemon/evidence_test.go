package daemon

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/peercred"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
	"github.com/quasim/quasim/internal/tuner"
)

// evidenceServer serves evaluate/harness's fake harness as kernel "fake"
// at problem 64, with an error budget (rel 1e-3; the harness bounds its
// error by 1e-5), its config ok,3 certified there by the real tuner and
// served. The harness computes wrong results once the file wrong exists:
// a device gone bad after the certification. The scheduler runs, so
// re-verifications run; no uid but root may write. setup, when not nil,
// runs before the scheduler starts; key signs the certificates.
func evidenceServer(t *testing.T, setup func(ts *testServer, key ed25519.PrivateKey)) (ts *testServer, job store.JobKey, served store.Served, wrong string) {
	t.Helper()
	kd, wrong := fakeKernelDir(t)
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.New(t)
	sched := &scheduler{
		dir: kd, st: st, cron: newCron(), log: zerolog.Nop(), clock: time.Now,
		tn: tuner.New(tuner.Config{Store: st, NewStrategy: defaultStrategy, Signer: key}),
	}
	sched.checks.every = map[string]time.Duration{"fake": 0}
	ts = serveTest(t, sched, st)
	ts.api.Writers.Self = math.MaxUint32 - 1 // the test's uid may not write
	ts.srv.setKey(key)
	if setup != nil {
		setup(ts, key)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sched.start(ctx, func() {})
	t.Cleanup(func() {
		cancel()
		sched.stop(time.Now().Add(time.Minute))
	})
	k, _ := sched.kernel("fake")
	j := k.jobs[0]
	tr := store.Trial{Key: "ok,3", Status: "ok", TimeMS: 2.5, TimesMS: []float64{2.5}, At: time.Now()}
	if _, err := st.AddTrials(j.key, []store.Trial{tr}); err != nil {
		t.Fatal(err)
	}
	res, err := sched.tn.Certify(ctx, tunerJob(k.spec, j.key, j.spec), 0)
	if err != nil || res.Served != "ok,3" {
		t.Fatalf("certify ok,3: %+v, %v", res, err)
	}
	sched.changed()
	served, ok, err := st.Served(j.key)
	if err != nil || !ok || served.Certificate == "" {
		t.Fatalf("served: %+v, %v, %v", served, ok, err)
	}
	return ts, j.key, served, wrong
}

// fakeKernelDir is a kernels directory whose one spec, "fake" at problem
// 64 with an error budget, runs evaluate/harness's fake harness; the
// harness computes wrong results once the file wrong exists.
func fakeKernelDir(t *testing.T) (kd, wrong string) {
	t.Helper()
	return fakeKernelDirAt(t, `"64"`)
}

// fakeKernelDirAt is fakeKernelDir with the spec's problems list.
func fakeKernelDirAt(t *testing.T, problems string) (kd, wrong string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakeharness")
	if out, err := exec.Command("go", "build", "-o", bin, "../evaluate/harness/testdata/fakeharness").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	wrong = filepath.Join(dir, "wrong")
	t.Setenv("FAKE_MODES", "ok") // the harness inherits the daemon's environment
	t.Setenv("FAKE_WRONG_FILE", wrong)
	kd = filepath.Join(dir, "kernels.d")
	spec := "name: fake\nevaluator: exec:" + bin + "\nproblems: [" + problems + "]\nschedule: \"@every 1h\"\nbudget: {evals: 4}\ntimeout: 20s\n" +
		"verify: {error_budget: {rel: 1e-3}}\n"
	if err := os.MkdirAll(kd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kd, "fake.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return kd, wrong
}

// observeAs posts obs to POST /v1/observations's handler as a peer of uid.
func (ts *testServer) observeAs(t *testing.T, uid uint32, obs ...api.Observation) api.ObservationsResponse {
	t.Helper()
	body, _ := json.Marshal(api.ObservationsRequest{Observations: obs})
	r := httptest.NewRequest("POST", "http://quasimd/v1/observations", bytes.NewReader(body))
	r = r.WithContext(sockapi.WithPeer(r.Context(), peercred.Cred{UID: uid, GID: uid}))
	out, err := ts.srv.postObservations(r)
	if err != nil {
		t.Fatalf("observations as uid %d: %v", uid, err)
	}
	return out.(api.ObservationsResponse)
}

func fakeError(e float64) api.Observation {
	return api.Observation{Kernel: "fake", Problem: "64", Key: "ok,3", LatenciesMS: []float64{2.5}, Source: "test", Error: e}
}

// rechecked waits until no re-verification is queued and at least n ran.
func (ts *testServer) rechecked(t *testing.T, n int) {
	t.Helper()
	rc := &ts.srv.rechecks
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		rc.mu.Lock()
		run, waiting := rc.run, len(rc.queued)
		rc.mu.Unlock()
		if run >= n && waiting == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("re-verifications: %d run, %d waiting after 60s; want %d run", run, waiting, n)
		}
	}
}

// 1,000 false error reports from one uid revoke nothing: the daemon
// records them (one record, count 1000), re-verifies the config once, and
// it passes. Once the device really computes wrong, one report revokes
// the certificate when the daemon's re-verification reproduces it.
func TestErrorReportsNeedEvidence(t *testing.T) {
	ts, job, served, wrong := evidenceServer(t, nil)
	ts.srv.setRecheck(time.Hour)
	for range 10 {
		batch := make([]api.Observation, 100)
		for i := range batch {
			batch[i] = fakeError(0.5)
		}
		resp := ts.observeAs(t, 1001, batch...)
		if len(resp.Revoked) != 0 || len(resp.Checking) != 1 || resp.Checking[0] != served.Certificate {
			t.Fatalf("false reports: %+v; want nothing revoked, %s checked", resp, served.Certificate)
		}
	}
	ts.rechecked(t, 1)
	if _, meta, err := ts.st.Cert(served.Certificate); err != nil || meta.Revoked {
		t.Fatalf("after 1,000 false reports of one uid: %+v, %v; want the certificate live", meta, err)
	}
	if sv, _, _ := ts.st.Served(job); sv.Certificate != served.Certificate {
		t.Fatalf("served after the false reports: %+v", sv)
	}
	reps, err := ts.st.Reports(served.Certificate)
	if err != nil || len(reps) != 1 || reps[0].Reporter != "uid:1001" || reps[0].Count != 1000 || reps[0].Source != "test" || reps[0].Error != 0.5 {
		t.Fatalf("reports recorded: %+v, %v; want uid:1001 x1000", reps, err)
	}
	ts.srv.rechecks.mu.Lock()
	run := ts.srv.rechecks.run
	ts.srv.rechecks.mu.Unlock()
	if run != 1 {
		t.Errorf("%d re-verifications for 1,000 reports within --recheck-every, want 1", run)
	}

	// The device goes bad: the next report's re-verification fails.
	if err := os.WriteFile(wrong, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ts.srv.setRecheck(time.Millisecond)
	posted := time.Now()
	resp := ts.observeAs(t, 1001, fakeError(0.5))
	if len(resp.Revoked) != 0 || len(resp.Checking) != 1 {
		t.Fatalf("real error: %+v; want it checked first", resp)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, meta, err := ts.st.Cert(served.Certificate)
		if err != nil {
			t.Fatal(err)
		}
		// revoke falls back right after the store took the revocation.
		if sv, ok, _ := ts.st.Served(job); meta.Revoked && (!ok || sv.Key != "ok,3") {
			if !strings.Contains(meta.Reason, "reproduced by this node's verification") || !strings.Contains(meta.Reason, "parity") {
				t.Errorf("revocation reason %q", meta.Reason)
			}
			t.Logf("real error revoked %.3gs after the report: %s", time.Since(posted).Seconds(), meta.Reason)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("real error not revoked within 60s")
		}
	}
	code, body := ts.get(t, "/v1/configs/fake?problem=64", nil)
	var c api.Config
	if err := json.Unmarshal(body, &c); err != nil || code != 200 || c.Key == "ok,3" {
		t.Errorf("after the revocation GET /v1/configs/fake = %d %s", code, body)
	}
	trials, err := ts.st.Trials(job)
	if err != nil || !slices.ContainsFunc(trials, func(tr store.Trial) bool { return tr.Key == "ok,3" && tr.Status == "wrong_result" }) {
		t.Errorf("trials after the failed re-verification: %+v, %v; want ok,3 wrong_result", trials, err)
	}
}

// A quorum of distinct uids reporting within the window revokes without
// the daemon's check failing; reports older than the window do not count.
func TestErrorReportQuorum(t *testing.T) {
	ts, _, served, _ := evidenceServer(t, nil)
	k, _ := ts.sched.kernel("fake")
	rep := errorReport{j: k.jobs[0], key: "ok,3", err: 0.5, source: "test"}
	now := time.Now()
	// Two uids an hour and more ago, one now: one within the window.
	for i, uid := range []uint32{1001, 1002, 1003} {
		at := now.Add(-DefaultReportWindow - time.Minute)
		if i == 2 {
			at = now
		}
		revoked, _, err := ts.srv.reportError(rep, uid, false, at)
		if err != nil || len(revoked) != 0 {
			t.Fatalf("report of uid %d: %v, %v; want nothing revoked", uid, revoked, err)
		}
	}
	// A second uid within the window: still short of DefaultUIDQuorum.
	if revoked, _, err := ts.srv.reportError(rep, 1002, false, now); err != nil || len(revoked) != 0 {
		t.Fatalf("two uids: %v, %v; want nothing revoked", revoked, err)
	}
	revoked, _, err := ts.srv.reportError(rep, 1004, false, now)
	if err != nil || len(revoked) != 1 || revoked[0] != served.Certificate {
		t.Fatalf("three uids: %v, %v; want %s revoked", revoked, err, served.Certificate)
	}
	_, meta, err := ts.st.Cert(served.Certificate)
	if err != nil || !meta.Revoked || !strings.Contains(meta.Reason, "3 distinct uids reported it within 1h0m0s (uid:1002, uid:1003, uid:1004)") {
		t.Errorf("revocation: %+v, %v", meta, err)
	}
	reps, _ := ts.st.Reports(served.Certificate)
	if len(reps) != 4 {
		t.Errorf("reports recorded: %+v, want the 4 uids'", reps)
	}

}

// An operator's report (a uid that may write) revokes at once: that uid
// could revoke the certificate anyway.
func TestErrorReportOperator(t *testing.T) {
	ts, _, served, _ := evidenceServer(t, nil)
	resp := ts.observeAs(t, ts.api.Writers.Self, fakeError(0.5))
	if len(resp.Revoked) != 1 || resp.Revoked[0] != served.Certificate || len(resp.Checking) != 0 {
		t.Fatalf("operator's report: %+v; want %s revoked at once", resp, served.Certificate)
	}
	if _, meta, err := ts.st.Cert(served.Certificate); err != nil || !strings.Contains(meta.Reason, "reported by operator uid") {
		t.Errorf("revocation: %+v, %v", meta, err)
	}
}

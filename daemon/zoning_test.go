package daemon

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
)

// newZoner is a zoner of ts's pipelines, as a daemon start builds one.
func newZoner(ts *testServer, ctx context.Context, key ed25519.PrivateKey) *zoner {
	z := &zoner{sched: ts.sched, key: key, lock: (&devices{}).lock, log: zerolog.Nop(), now: time.Now, ctx: ctx}
	ts.srv.zoner = z
	z.update(ctx, ts.sched.pipelines())
	return z
}

// zoneDir is a kernel directory with conv2d feeding reduce, zoned by
// pipeline infer at rel 1e-3 on positive inputs.
func zoneDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"conv2d.yaml": "name: conv2d\nevaluator: builtin:conv2d\nproblems: [\"48,52,5\"]\nparameters: {workers: [1]}\n",
		"reduce.yaml": "name: reduce\nevaluator: builtin:reduce\nproblems: [\"65536\"]\nparameters: {block: [256, 1024], workers: [1]}\n",
		"infer.yaml":  "pipeline: infer\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 1e-3}, inputs: positive}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// zoned serves dir's kernels with a zoner under a fresh daemon key, and
// waits for its tuning of infer to be done.
func zoned(t *testing.T, dir string) (*testServer, *zoner, ed25519.PrivateKey, context.Context, api.Zoning) {
	t.Helper()
	ts := newTestServer(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, key, _ := ed25519.GenerateKey(nil)
	z := newZoner(ts, ctx, key)
	return ts, z, key, ctx, waitZoning(t, z)
}

// waitZoning waits for z's zoning of infer to be done.
func waitZoning(t *testing.T, z *zoner) api.Zoning {
	t.Helper()
	res := waitZoned(t, z)
	if res.State != api.ZoningDone {
		t.Fatalf("zoning %+v", res)
	}
	return res
}

// waitZoned waits for z's tuning of infer to end, done or failed.
func waitZoned(t *testing.T, z *zoner) api.Zoning {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; {
		res, err := z.get("infer")
		if err != nil {
			t.Fatal(err)
		}
		if res.State != api.ZoningTuning {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("zoning still tuning after 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A start (a new zoner on the same state file) serves the stored zoning
// without measuring only while the chain kernels serve the configs it was
// tuned at: a new served config tunes it again, at that config.
func TestZoningRestoredOnlyAtTheSameConfigs(t *testing.T) {
	ts, _, key, ctx, first := zoned(t, zoneDir(t))
	if first.Map == nil || first.Restored || first.CertificateID == "" {
		t.Fatalf("first tuning: %+v", first)
	}
	again, err := newZoner(ts, ctx, key).get("infer")
	if err != nil || again.State != api.ZoningDone || !again.Restored || again.CertificateID != first.CertificateID {
		t.Fatalf("a start at the same configs: %+v, %v; want the stored zoning", again, err)
	}
	_, served := ts.serve(t, "reduce", "65536")
	z := newZoner(ts, ctx, key)
	if res, _ := z.get("infer"); res.Restored {
		t.Fatalf("a start at a new served reduce config %s restored the zoning tuned at %s", served, first.Map.Stages[1].Key)
	}
	res := waitZoning(t, z)
	if i := strings.LastIndex(served, ","); res.Default == nil || !strings.HasPrefix(res.Default.Stages[1].Key, served[:i]) || !res.TunedAt.After(first.TunedAt) {
		t.Fatalf("tuned again: %+v, want the reduce stage at %s", res, served)
	}
}

// A map whose certificate cannot be made (here the daemon key is unusable)
// is not served: the failed zoning holds no map, and lookups carry none.
func TestZoningUncertifiedMapNotServed(t *testing.T) {
	ts := newTestServer(t, zoneDir(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := waitZoned(t, newZoner(ts, ctx, ed25519.PrivateKey{1, 2, 3}))
	if res.State != api.ZoningFailed || !strings.Contains(res.Error, "certify") {
		t.Fatalf("zoning with a bad key: %+v, want failed to certify", res)
	}
	if res.Map != nil || res.Certificate != "" || res.CertificateID != "" {
		t.Errorf("failed zoning still holds map %+v, certificate %q", res.Map, res.CertificateID)
	}
	for _, k := range []string{"conv2d", "reduce"} {
		if zs := ts.srv.zoner.stages(k); len(zs) != 0 {
			t.Errorf("%s lookups carry uncertified stages %+v", k, zs)
		}
	}
}

// A runtime's report is checked against the limit its zoned stage
// certifies, in that stage's unit and at the problem the stage runs at:
// conv2d's per-output absolute error (its job's budget is abs), the
// reduce's relative error at the conv2d's output length (the problem it
// sums in the chain), not at its own spec's first problem.
func TestZonedStageLimits(t *testing.T) {
	dir := zoneDir(t)
	for name, body := range map[string]string{
		"conv2d.yaml": "name: conv2d\nevaluator: builtin:conv2d\nproblems: [\"48,52,5\"]\nparameters: {workers: [1]}\nverify: {error_budget: {abs: 1}}\n",
		"reduce.yaml": "name: reduce\nevaluator: builtin:reduce\nproblems: [\"65536\", \"2112\"]\nparameters: {block: [256, 1024], workers: [1]}\nverify: {error_budget: {rel: 1e-3}}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts, z, _, _, res := zoned(t, dir)
	z.mu.Lock()
	z.ctx = nil // no tuning queued by a revocation: the map served stays put
	z.mu.Unlock()
	if res.Map == nil {
		t.Fatalf("no map served: %+v", res)
	}
	up, red := res.Map.Stages[0], res.Map.Stages[1]
	if up.Problem != "48,52,5" || up.Unit != "abs" || !(up.Limit > 0) || red.Problem != "2112" || red.Unit != "rel" || !(red.Limit > 0) {
		t.Fatalf("stages %+v %+v: want conv2d at 48,52,5 in abs, reduce at 2112 (44x48 outputs) in rel, limits > 0", up, red)
	}
	t.Logf("conv2d limit %.3g abs (share %.3g rel), reduce limit %.3g rel", up.Limit, up.Bound, red.Limit)
	observe := func(kernel, problem, key string, e float64) []string {
		t.Helper()
		body := fmt.Sprintf(`{"observations":[{"kernel":%q,"problem":%q,"key":%q,"latencies_ms":[0.1],"error":%g}]}`, kernel, problem, key, e)
		code, out := ts.postBody(t, "/v1/observations", body)
		var resp api.ObservationsResponse
		if err := json.Unmarshal(out, &resp); code != 200 || err != nil {
			t.Fatalf("observe: %d %s", code, out)
		}
		return resp.Revoked
	}
	if got := observe("conv2d", up.Problem, up.Key, up.Limit/2); len(got) != 0 {
		t.Fatalf("conv2d error at half its abs limit %.3g revoked %q", up.Limit, got)
	}
	if got := observe("reduce", "65536", red.Key, 2*red.Limit); len(got) != 0 {
		t.Fatalf("a reduce error at its own problem 65536, not the chain's, revoked %q", got)
	}
	if got := observe("reduce", red.Problem, red.Key, red.Limit); len(got) != 0 {
		t.Fatalf("a reduce error at its limit revoked %q", got)
	}
	if got := observe("reduce", red.Problem, red.Key, 2*red.Limit); len(got) != 1 || got[0] != res.CertificateID {
		t.Fatalf("a reduce error at twice its limit at the chain's problem revoked %q, want %s", got, res.CertificateID)
	}
	next, _ := z.get("infer")
	if next.Map == nil {
		t.Skip("no second certified map to check the conv2d stage on")
	}
	if up = next.Map.Stages[0]; observe("conv2d", up.Problem, up.Key, 2*up.Limit) == nil {
		t.Errorf("conv2d error at twice its abs limit %.3g revoked nothing", up.Limit)
	}
}

// olderCert certifies map m of infer's run in z as an earlier tuning that
// served it would have, leaving the served map as it is, and returns the
// certificate's id.
func olderCert(t *testing.T, ts *testServer, z *zoner, m api.ZoneMap) string {
	t.Helper()
	p, _ := ts.sched.pipeline("infer")
	z.mu.Lock()
	defer z.mu.Unlock()
	r := z.runs["infer"]
	older := r.res
	older.Map = &m
	if err := z.certifyMap(p, &older, r.device, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	return older.CertificateID
}

// A revoked certificate of a map not served now (an earlier tuning's)
// keeps that map from being served again: revoked through the API, or
// found revoked in the store at a start (a fleet node's revocation). When
// the served map is revoked, the fallback is neither.
func TestZoningOlderCertRevoked(t *testing.T) {
	ts, z, key, ctx, first := zoned(t, zoneDir(t))
	z.mu.Lock()
	certified := slices.Clone(z.runs["infer"].certified)
	z.mu.Unlock()
	if len(certified) < 4 {
		t.Fatalf("%d maps certified, want 4 or more", len(certified))
	}
	b, c := certified[1], certified[2]
	bKey, cKey := b.Key(), c.Key()

	// B's older certificate is revoked in the store only; a start restores
	// the zoning without B.
	if _, err := ts.st.Revoke(olderCert(t, ts, z, b), "fleet test", time.Now()); err != nil {
		t.Fatal(err)
	}
	z = newZoner(ts, ctx, key)
	if res, _ := z.get("infer"); !res.Restored || res.CertificateID != first.CertificateID {
		t.Fatalf("start: %+v, want the stored zoning", res)
	}
	z.mu.Lock()
	z.ctx = nil // no tuning queued by a revocation: what is served is the fallback's
	if slices.ContainsFunc(z.runs["infer"].certified, func(m api.ZoneMap) bool { return m.Key() == bKey }) {
		t.Errorf("restored certified maps hold %s, whose certificate is revoked", bKey)
	}
	z.mu.Unlock()

	// C's older certificate is revoked through the API.
	if _, err := ts.srv.revoke(olderCert(t, ts, z, c), "operator test", runRequest{trigger: "reverify", certify: true}); err != nil {
		t.Fatal(err)
	}
	if res, _ := z.get("infer"); res.CertificateID != first.CertificateID || !slices.Contains(res.Revoked, cKey) {
		t.Errorf("after revoking C's older certificate: serves %s, revoked %q; want the same map, C listed", res.CertificateID, res.Revoked)
	}
	if _, err := ts.srv.revoke(first.CertificateID, "operator test", runRequest{trigger: "reverify", certify: true}); err != nil {
		t.Fatal(err)
	}
	res, _ := z.get("infer")
	if res.Map == nil || res.CertificateID == "" {
		t.Fatalf("after revoking the served map: %+v, want a fallback", res)
	}
	if k := res.Map.Key(); k == bKey || k == cKey || k == first.Map.Key() {
		t.Errorf("fell back to %s, whose certificate is revoked", k)
	}
}

// Revocations while tunings start: a tuning's fresh answer is built
// before it runs, under the lock, not from the run's answer a fallback
// rewrites (go test -race finds the race otherwise, when the revocation
// comes first).
func TestZoningRevokedWhileTuningStarts(t *testing.T) {
	ts, z, _, ctx, res := zoned(t, zoneDir(t))
	for i := 0; i < 8 && res.CertificateID != ""; i++ {
		if _, err := z.rezone(ctx, "infer"); err != nil {
			t.Fatal(err)
		}
		if _, err := ts.srv.revoke(res.CertificateID, "operator test", runRequest{trigger: "reverify", certify: true}); err != nil {
			t.Fatal(err)
		}
		if res, _ = z.get("infer"); res.CertificateID != "" && slices.Contains(res.Revoked, res.Map.Key()) {
			t.Fatalf("serves revoked map %s", res.Map.Key())
		}
	}
	waitZoning(t, z)
}

// A tuning again certifies the same map anew; revoking its older
// certificate revokes the map: it is no longer served under the new one,
// whose certificate goes with it.
func TestZoningOlderCertificateRevokesMap(t *testing.T) {
	ts, z, _, ctx, first := zoned(t, zoneDir(t))
	if _, err := z.rezone(ctx, "infer"); err != nil {
		t.Fatal(err)
	}
	again := waitZoning(t, z)
	if again.Map == nil || again.Map.Key() != first.Map.Key() || again.CertificateID == first.CertificateID {
		t.Skipf("the tuning again served %v under %s; the test needs the same map under a new certificate", again.Map, again.CertificateID)
	}
	resp, err := ts.srv.revoke(first.CertificateID, "operator test", runRequest{trigger: "reverify", certify: true})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Requeued {
		t.Error("revoking the served map's older certificate queued no tuning")
	}
	res, _ := z.get("infer")
	if res.Map != nil && res.Map.Key() == first.Map.Key() {
		t.Fatalf("serves map %s under %s after its older certificate %s was revoked", res.Map.Key(), res.CertificateID, first.CertificateID)
	}
	if _, meta, err := ts.srv.st.Cert(again.CertificateID); err != nil || !meta.Revoked {
		t.Errorf("the map's newer certificate %s: revoked %v (%v)", again.CertificateID, meta.Revoked, err)
	}
	waitZoning(t, z)
}

// A tuning again that fails (here its map cannot be certified: the daemon
// key became unusable) leaves the map served as it was, its certificate
// live, and says why in Error.
func TestZoningFailedRetuneKeepsMap(t *testing.T) {
	ts, z, _, ctx, first := zoned(t, zoneDir(t))
	z.mu.Lock()
	z.key = ed25519.PrivateKey{1, 2, 3}
	z.mu.Unlock()
	if _, err := z.rezone(ctx, "infer"); err != nil {
		t.Fatal(err)
	}
	res := waitZoned(t, z)
	if res.Map == nil || res.CertificateID != first.CertificateID || !strings.Contains(res.Error, "certify") || !res.TunedAt.Equal(first.TunedAt) {
		t.Fatalf("after a failed tuning: map %v, certificate %q (was %q), error %q, tuned at %v (was %v)", res.Map != nil, res.CertificateID, first.CertificateID, res.Error, res.TunedAt, first.TunedAt)
	}
	if zs := ts.srv.zoner.stages("reduce"); len(zs) != 1 || zs[0].Key != first.Map.Stages[1].Key {
		t.Errorf("reduce lookups carry %+v, want the map served before", zs)
	}
}

// heldLock is a device lock a test holds: tunings wait in it, after they
// read the chain's configs, until release; calls counts them.
type heldLock struct {
	open  chan struct{}
	calls atomic.Int32
}

func newHeldLock() *heldLock { return &heldLock{open: make(chan struct{})} }

func (h *heldLock) lock(ctx context.Context, _ string) (func(), error) {
	h.calls.Add(1)
	select {
	case <-h.open:
		return func() {}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *heldLock) release() { close(h.open) }

// wait waits for n tunings to have reached the lock.
func (h *heldLock) wait(t *testing.T, n int32) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); h.calls.Load() < n; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("%d tunings reached the device lock in 60s, want %d", h.calls.Load(), n)
		}
	}
}

// A served config promoted while the first tuning runs (no map yet, no
// jobs for jobsChanged to match) is not missed: the map served is tuned
// at the new config.
func TestZoningFirstTuningSeesNewConfig(t *testing.T) {
	ts := newTestServer(t, zoneDir(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, key, _ := ed25519.GenerateKey(nil)
	h := newHeldLock()
	z := &zoner{sched: ts.sched, key: key, lock: h.lock, log: zerolog.Nop(), now: time.Now, ctx: ctx}
	ts.srv.zoner = z
	z.update(ctx, ts.sched.pipelines())
	h.wait(t, 1) // the tuning has read the configs
	job, served := ts.serve(t, "reduce", "65536")
	z.jobsChanged(ctx, job) // as scheduler.changed does
	h.release()
	res := waitZoning(t, z)
	if i := strings.LastIndex(served, ","); res.Default == nil || !strings.HasPrefix(res.Default.Stages[1].Key, served[:i]) {
		t.Fatalf("tuned at reduce %v, want the config promoted meanwhile, %s", res.Default, served)
	}
}

// A tuning in flight is not started again when a chain job's served
// answers change but its configs do not (every cycle's end, drift, fleet
// offers call jobsChanged): a slow zoning would never end.
func TestZoningTuningNotRestartedWithoutNewConfig(t *testing.T) {
	_, z, _, ctx, _ := zoned(t, zoneDir(t))
	h := newHeldLock()
	z.mu.Lock()
	z.lock = h.lock
	jobs := slices.Clone(z.runs["infer"].jobs)
	z.mu.Unlock()
	if _, err := z.rezone(ctx, "infer"); err != nil {
		t.Fatal(err)
	}
	h.wait(t, 1)
	for range 3 {
		z.jobsChanged(ctx, jobs...)
	}
	// Started again, a tuning would reach the lock at once; none does in
	// a second (a wait that only a restart can cut short).
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); runtime.Gosched() {
		if n := h.calls.Load(); n > 1 {
			t.Fatalf("the tuning started again %d times with the same configs", n-1)
		}
	}
	h.release()
	if res := waitZoning(t, z); res.Map == nil {
		t.Fatalf("tuned: %+v", res)
	}
}

// reload loads dir again and tells z, as the daemon's reload does.
func reload(ts *testServer, z *zoner, ctx context.Context) {
	ts.sched.apply(ts.sched.load())
	z.update(ctx, ts.sched.pipelines())
}

// A reload with the zoning section as it was still tunes again when a
// chain kernel's spec changed, and after a failed tuning once its missing
// kernel is loaded.
func TestZoningReloadAfterKernelChange(t *testing.T) {
	dir := zoneDir(t)
	ts, z, _, ctx, first := zoned(t, dir)
	conv := filepath.Join(dir, "conv2d.yaml")
	body, err := os.ReadFile(conv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conv, []byte(strings.Replace(string(body), "workers: [1]", "workers: [1, 2]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	reload(ts, z, ctx)
	if res := waitZoning(t, z); !res.TunedAt.After(first.TunedAt) {
		t.Fatalf("after conv2d's spec changed: tuned at %v, the first tuning's time", res.TunedAt)
	}
	if err := os.Rename(conv, conv+".off"); err != nil {
		t.Fatal(err)
	}
	reload(ts, z, ctx)
	if res := waitZoned(t, z); res.State != api.ZoningFailed || res.Map != nil || !strings.Contains(res.Error, "conv2d") {
		t.Fatalf("conv2d gone: %+v, want failed naming it, no map", res)
	}
	if err := os.Rename(conv+".off", conv); err != nil {
		t.Fatal(err)
	}
	reload(ts, z, ctx)
	if res := waitZoned(t, z); res.State != api.ZoningDone || res.Map == nil {
		t.Fatalf("conv2d back: %+v, want tuned again", res)
	}
}

// A zoning stored before its stages recorded their limits is tuned again
// at a start, not restored: a runtime's report could not be checked
// against it.
func TestZoningStoredWithoutLimitsTunedAgain(t *testing.T) {
	ts, _, key, ctx, _ := zoned(t, zoneDir(t))
	rec, ok, err := ts.st.Zoning("infer")
	if err != nil || !ok {
		t.Fatalf("stored zoning: %v %v", ok, err)
	}
	var st zoneState
	if err := json.Unmarshal(rec.Result, &st); err != nil {
		t.Fatal(err)
	}
	for i := range st.Zoning.Map.Stages {
		st.Zoning.Map.Stages[i].Limit, st.Zoning.Map.Stages[i].Unit = 0, ""
	}
	if rec.Result, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := ts.st.PutZoning(rec); err != nil {
		t.Fatal(err)
	}
	if res, _ := newZoner(ts, ctx, key).get("infer"); res.Restored {
		t.Fatalf("restored a map whose stages have no limits: %+v", res.Map)
	}
}

// A report whose unit (its job's verify.error_budget kind; here none) is
// not the stage's is not compared, however large.
func TestZonedStageReportInAnotherUnitIgnored(t *testing.T) {
	ts, _, _, _, res := zoned(t, zoneDir(t))
	if res.Map == nil {
		t.Fatalf("no map served: %+v", res)
	}
	for _, st := range res.Map.Stages {
		body := fmt.Sprintf(`{"observations":[{"kernel":%q,"problem":%q,"key":%q,"latencies_ms":[0.1],"error":1e9}]}`, st.Kernel, st.Problem, st.Key)
		if st.Kernel == "reduce" {
			body = strings.Replace(body, st.Problem, "65536", 1) // its only job
		}
		code, out := ts.postBody(t, "/v1/observations", body)
		var resp api.ObservationsResponse
		if err := json.Unmarshal(out, &resp); code != 200 || err != nil || len(resp.Revoked) != 0 {
			t.Fatalf("%s error 1e9 with no unit: %d %s; want nothing revoked", st.Kernel, code, out)
		}
	}
}

package daemon

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/fleet"
	"github.com/quasim/quasim/fleet/fleettest"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
	"github.com/quasim/quasim/internal/tuner"
)

// fleetFollower runs a node of fleet "rtest" on urls, with the state file
// at path and the kernels of kd, signing with key and trusting trust; it
// tunes nothing by itself. stop stops it and closes the state file.
func fleetFollower(t *testing.T, kd, path string, urls []string, trust string, key ed25519.PrivateKey) (ts *testServer, fn *fleetNode, stop func()) {
	t.Helper()
	return fleetFollowerWait(t, 0, kd, path, urls, trust, key)
}

// fleetFollowerWait is fleetFollower with --fleet-wait wait.
func fleetFollowerWait(t *testing.T, wait time.Duration, kd, path string, urls []string, trust string, key ed25519.PrivateKey) (ts *testServer, fn *fleetNode, stop func()) {
	t.Helper()
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sched := &scheduler{
		dir: kd, st: st, cron: newCron(), log: zerolog.Nop(), clock: time.Now,
		tn: tuner.New(tuner.Config{Store: st, NewStrategy: defaultStrategy, Signer: key}),
	}
	ts = serveTest(t, sched, st)
	ts.srv.setKey(key)
	if fn, err = newFleetNode(FleetConfig{URLs: urls, Name: "rtest", TrustDir: trust, Wait: wait}, key, sched, st, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	ts.srv.fleet, sched.onChange = fn, fn.localChanged
	ctx, cancel := context.WithCancel(context.Background())
	sched.start(ctx, func() {})
	done := make(chan struct{})
	go func() { fn.run(ctx, ts.srv); close(done) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-done
		sched.stop(time.Now().Add(time.Minute))
		st.Close()
	}
	t.Cleanup(stop)
	return ts, fn, stop
}

func (ts *testServer) fakeConfig(t *testing.T) api.Config {
	t.Helper()
	code, body := ts.get(t, "/v1/configs/fake?problem=64", nil)
	var c api.Config
	if err := json.Unmarshal(body, &c); err != nil || code != 200 {
		t.Fatalf("GET /v1/configs/fake = %d %s", code, body)
	}
	return c
}

// fleetKeys are a tuner's key, a follower's, and a trust directory
// holding the tuner's public key.
func fleetKeys(t *testing.T) (tuner, follower ed25519.PrivateKey, trust string) {
	t.Helper()
	pub, tuner, _ := ed25519.GenerateKey(nil)
	_, follower, _ = ed25519.GenerateKey(nil)
	trust = t.TempDir()
	if err := os.WriteFile(filepath.Join(trust, "tuner.pub"), []byte(certs.FormatPublicKey(pub)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tuner, follower, trust
}

// fleetTuner certifies ok,3 of kd's kernel at problem with key and offers
// it to fleet "rtest" on cl; it returns what it served.
func fleetTuner(t *testing.T, ctx context.Context, cl *fleettest.Cluster, kd, problem string, key ed25519.PrivateKey) store.Served {
	t.Helper()
	return fleetTunerKey(t, ctx, cl, kd, problem, key, "ok,3")
}

// fleetTunerKey is fleetTuner certifying config cfg.
func fleetTunerKey(t *testing.T, ctx context.Context, cl *fleettest.Cluster, kd, problem string, key ed25519.PrivateKey, cfg string) store.Served {
	t.Helper()
	return fleetTunerAt(t, ctx, cl, kd, problem, key, cfg, time.Now)
}

// fleetTunerAt is fleetTunerKey on a node whose clock is now.
func fleetTunerAt(t *testing.T, ctx context.Context, cl *fleettest.Cluster, kd, problem string, key ed25519.PrivateKey, cfg string, now func() time.Time) store.Served {
	t.Helper()
	st := storetest.New(t)
	tuned := &scheduler{dir: kd, st: st, cron: newCron(), log: zerolog.Nop(), clock: now,
		tn: tuner.New(tuner.Config{Store: st, NewStrategy: defaultStrategy, Signer: key, Now: now})}
	tuned.apply(tuned.load())
	k, _ := tuned.kernel("fake")
	var j *job
	for _, jj := range k.jobs {
		if jj.key.Problem == problem {
			j = jj
		}
	}
	if _, err := st.AddTrials(j.key, []store.Trial{{Key: cfg, Status: "ok", TimeMS: 2.5, TimesMS: []float64{2.5}, At: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if res, err := tuned.tn.Certify(ctx, tunerJob(k.spec, j.key, j.spec), 0); err != nil || res.Served != cfg {
		t.Fatalf("certify: %+v, %v", res, err)
	}
	sv, _, _ := st.Served(j.key)
	body, _, err := st.Cert(sv.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	if err := fleetReporter(t, ctx, cl, "rtest", key).PublishCert(body); err != nil {
		t.Fatal(err)
	}
	return sv
}

// A node restarted while its fleet is out of reach serves the fleet
// config it had verified, at once, and says how old its view is.
func TestFleetRestartWithoutNATS(t *testing.T) {
	cl := fleettest.Start(t, 1)
	kd, _ := fakeKernelDir(t)
	key2, key1, trust := fleetKeys(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sv := fleetTuner(t, ctx, cl, kd, "64", key2)
	path := filepath.Join(t.TempDir(), "quasim.db")
	ts, _, stop := fleetFollower(t, kd, path, cl.URLs(), trust, key1)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c := ts.fakeConfig(t)
		recs, _, err := ts.st.FleetState()
		if err != nil {
			t.Fatal(err)
		}
		if c.Source == api.SourceFleet && c.Certificate == sv.Certificate && c.Verification == api.VerifyPassed && len(recs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower after 60s: %+v, kept %d records", c, len(recs))
		}
	}
	stop()
	cl.Stop()

	down := time.Now()
	ts, fn, _ := fleetFollower(t, kd, path, cl.URLs(), trust, key1)
	// Its kept offers are held back until the client finds the fleet out
	// of reach (a refused connection: at once); until then it answers the
	// default, never anything else.
	var c api.Config
	for deadline := time.Now().Add(fleet.HoldRestored); ; time.Sleep(time.Millisecond) {
		c = ts.fakeConfig(t)
		if c.Source == api.SourceFleet || c.Match != api.MatchDefault || time.Now().After(deadline) {
			break
		}
	}
	if c.Source != api.SourceFleet || c.Certificate != sv.Certificate || c.Key != "ok,3" || c.Verification != api.VerifyPassed {
		t.Fatalf("restarted with NATS down: %+v; want the fleet config it had verified", c)
	}
	t.Logf("served %s from the kept fleet view %.3gs after the restart", c.Key, time.Since(down).Seconds())
	st := fn.cl.Status()
	if st.Connected || st.Live || st.Restored != 1 || st.Synced.IsZero() {
		t.Errorf("fleet status after the restart: %+v", st)
	}
	code, raw := ts.get(t, "/v1/fleet", nil)
	var fs api.FleetStatus
	if err := json.Unmarshal(raw, &fs); err != nil || code != 200 || fs.Live || fs.Synced == nil || !(fs.ViewAgeS > 0) || fs.Restored != 1 {
		t.Errorf("GET /v1/fleet = %d %s", code, raw)
	}
}

// A nearest answer considers the fleet's offers of the same spec version
// and device class: a follower with nothing tuned answers a problem it
// does not list with the fleet config of the nearest problem, and
// verifies it there before it calls it certified there.
func TestFleetNearest(t *testing.T) {
	cl := fleettest.Start(t, 1)
	kd, _ := fakeKernelDirAt(t, `"64", "4096"`)
	key2, key1, trust := fleetKeys(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sv := fleetTuner(t, ctx, cl, kd, "64", key2)
	ts, _, _ := fleetFollower(t, kd, filepath.Join(t.TempDir(), "quasim.db"), cl.URLs(), trust, key1)
	ts.sched.checks.mu.Lock()
	ts.sched.checks.every = map[string]time.Duration{"fake": 0}
	ts.sched.checks.mu.Unlock()
	var c api.Config
	first := time.Now()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, body := ts.get(t, "/v1/configs/fake?problem=100", nil)
		if err := json.Unmarshal(body, &c); err != nil || code != 200 {
			t.Fatalf("GET /v1/configs/fake?problem=100 = %d %s", code, body)
		}
		if c.Source == api.SourceFleet && c.Verification == api.VerifyPassed {
			t.Logf("fleet config of 64 answered at 100, verified there %.3gs after the first lookup", time.Since(first).Seconds())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("answer at 100 after 60s: %+v", c)
		}
	}
	if c.Match != api.MatchNearest || c.From != "64" || c.Key != "ok,3" || c.CertifiedFor != "100" || c.Certificate == sv.Certificate || c.Issuer != ts.srv.keyID {
		t.Errorf("verified fleet nearest answer: %+v", c)
	}
}

// A follower whose fleet config is revoked waits, for --fleet-wait as at
// its start, for the issuer's next one rather than tuning for itself at
// once: an issuer re-certifies soon after it revokes, and a follower that
// tuned meanwhile would serve its own config apart from the fleet from
// then on (TestFleetPartitions saw it on every revocation under delay).
func TestFleetRevocationAwaitsReplacement(t *testing.T) {
	cl := fleettest.Start(t, 1)
	kd, _ := fakeKernelDir(t)
	key2, key1, trust := fleetKeys(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := fleetTuner(t, ctx, cl, kd, "64", key2)
	ts, fn, _ := fleetFollowerWait(t, 10*time.Minute, kd, filepath.Join(t.TempDir(), "quasim.db"), cl.URLs(), trust, key1)
	waitFleetCert := func(id string) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if c := ts.fakeConfig(t); c.Source == api.SourceFleet && c.Certificate == id {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("follower after 60s: %+v, want fleet certificate %.12s", ts.fakeConfig(t), id)
			}
		}
	}
	waitFleetCert(first.Certificate)
	// Its first cycle waits for the fleet, as the daemon's scheduler
	// decides at start (this harness loads its jobs before the fleet).
	k, _ := ts.sched.kernel("fake")
	var keys []store.JobKey
	for _, j := range k.jobs {
		if !fn.deferStart(j) {
			t.Fatal("the follower's job does not wait for the fleet")
		}
		keys = append(keys, j.key)
	}
	fleetReporter(t, ctx, cl, "rtest", key2).PublishRevocation(first.Certificate, "superseded", time.Now())
	for deadline := time.Now().Add(60 * time.Second); ts.fakeConfig(t).Certificate == first.Certificate; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the revoked fleet config still served after 60s")
		}
	}
	// A cycle started at the revocation (the fake kernel's first
	// evaluation sleeps) would have begun by now.
	time.Sleep(500 * time.Millisecond)
	for _, k := range keys {
		cycles, err := ts.st.Cycles(k)
		if err != nil {
			t.Fatal(err)
		}
		trials, _ := ts.st.Trials(k)
		if len(cycles) > 0 || len(trials) > 0 {
			t.Fatalf("the follower tuned %s for itself after the revocation (%d cycles, %d trials) instead of waiting for the fleet", k, len(cycles), len(trials))
		}
	}
	next := fleetTuner(t, ctx, cl, kd, "64", key2)
	if next.Certificate == first.Certificate {
		t.Fatal("the replacement has the revoked certificate's id")
	}
	waitFleetCert(next.Certificate)
}

// While a follower's job waits for the issuer's replacement of a revoked
// fleet config, the fleet config of the nearest problem may answer it:
// verified at this problem at once (not "waiting" for a cycle the fleet
// defers), and then named as this node's certificate of that check.
func TestFleetNearestWhileAwaitingReplacement(t *testing.T) {
	cl := fleettest.Start(t, 1)
	kd, _ := fakeKernelDirAt(t, `"64", "4096"`)
	key2, key1, trust := fleetKeys(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	at64 := fleetTuner(t, ctx, cl, kd, "64", key2)
	at4096 := fleetTunerKey(t, ctx, cl, kd, "4096", key2, "ok,4")
	ts, fn, _ := fleetFollowerWait(t, 10*time.Minute, kd, filepath.Join(t.TempDir(), "quasim.db"), cl.URLs(), trust, key1)
	get := func() api.Config {
		code, body := ts.get(t, "/v1/configs/fake?problem=64", nil)
		var c api.Config
		if err := json.Unmarshal(body, &c); err != nil || code != 200 {
			t.Fatalf("GET /v1/configs/fake?problem=64 = %d %s", code, body)
		}
		return c
	}
	for deadline := time.Now().Add(60 * time.Second); get().Certificate != at64.Certificate; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("follower after 60s: %+v", get())
		}
	}
	k, _ := ts.sched.kernel("fake")
	for _, j := range k.jobs {
		if !fn.deferStart(j) {
			t.Fatal("the follower's job does not wait for the fleet")
		}
	}
	fleetReporter(t, ctx, cl, "rtest", key2).PublishRevocation(at64.Certificate, "superseded", time.Now())
	var c api.Config
	var states []string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c = get()
		if c.Certificate == at64.Certificate {
			continue
		}
		if c.Source == api.SourceFleet && (len(states) == 0 || states[len(states)-1] != c.Verification) {
			states = append(states, c.Verification)
		}
		if c.Verification == api.VerifyPassed || time.Now().After(deadline) {
			break
		}
	}
	if c.Match != api.MatchNearest || c.From != "4096" || c.Verification != api.VerifyPassed || c.Issuer != ts.srv.keyID ||
		c.CertifiedFor != "64" || c.Certificate == at4096.Certificate {
		t.Fatalf("answer at 64 while its replacement is awaited: %+v (verification states %q)", c, states)
	}
	for _, s := range states {
		if s != api.VerifyPending && s != api.VerifyPassed {
			t.Errorf("a fleet nearest answer's verification was %q, want pending then passed", s)
		}
	}
	t.Logf("nearest fleet answer at 64 while awaiting the replacement: verification %q", states)
}

// Clock skew between nodes: certificates' times order nothing a follower
// relies on. An issuer 3 h ahead certifies; the follower serves and
// verifies it; the issuer revokes it and certifies a successor with its
// clock now 3 h behind (issued "before" the first): the follower serves
// the successor.
func TestFleetClockSkew(t *testing.T) {
	cl := fleettest.Start(t, 1)
	kd, _ := fakeKernelDir(t)
	key2, key1, trust := fleetKeys(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ahead := func() time.Time { return time.Now().Add(3 * time.Hour) }
	behind := func() time.Time { return time.Now().Add(-3 * time.Hour) }
	first := fleetTunerAt(t, ctx, cl, kd, "64", key2, "ok,3", ahead)
	ts, _, _ := fleetFollowerWait(t, 10*time.Minute, kd, filepath.Join(t.TempDir(), "quasim.db"), cl.URLs(), trust, key1)
	wait := func(id, what string) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			c := ts.fakeConfig(t)
			if c.Source == api.SourceFleet && c.Certificate == id && c.Verification == api.VerifyPassed {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: after 60s the follower serves %+v, want %.12s verified", what, c, id)
			}
		}
	}
	wait(first.Certificate, "issuer 3 h ahead")
	reporter := fleetReporter(t, ctx, cl, "rtest", key2)
	reporter.PublishRevocation(first.Certificate, "superseded", ahead())
	next := fleetTunerAt(t, ctx, cl, kd, "64", key2, "ok,4", behind)
	wait(next.Certificate, "successor issued by a clock 3 h behind")
	if c := ts.fakeConfig(t); c.Key != "ok,4" {
		t.Fatalf("successor: %+v", c)
	}
}

package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/fleet"
	"github.com/quasim/quasim/fleet/fleettest"
	"github.com/quasim/quasim/internal/testload"
)

// fleetProblems are the jobs the fleet test tunes on one node.
var fleetProblems = []string{"16384", "24576", "32768", "40960", "49152", "57344", "65536", "73728"}

const fleetSpec = `name: reduce
evaluator: builtin:reduce
problems: [16384, 24576, 32768, 40960, 49152, 57344, 65536, 73728]
schedule: "@every 24h"
budget: {evals: 4}
`

// seen is when a follower first served a fleet config, and which.
type seen struct {
	at   time.Time
	cert string
	cfg  api.Config
}

// Three real quasimd of one device class on a real 3-server JetStream
// cluster: one tunes, the two others serve its certified configs from the
// fleet without tuning, say so (source fleet, its issuer), and verify each
// locally; with all servers up, and with one killed while the tuner
// publishes. The delay from each promotion to a follower serving it is
// logged (p50, p99).
func TestFleetServesCertifiedConfigs(t *testing.T) {
	t.Parallel()
	binaries(t)
	t.Run("all servers up", func(t *testing.T) { fleetServes(t, false) })
	t.Run("one server killed", func(t *testing.T) { fleetServes(t, true) })
}

func fleetServes(t *testing.T, kill bool) {
	cl := fleettest.Start(t, 3)
	dirA := newDir(t, map[string]string{"reduce.yaml": fleetSpec})
	trust, issuer := trustKeyOf(t, dirA)
	fleetArgs := []string{"--fleet", strings.Join(cl.URLs(), ","), "--fleet-name", "itest", "--fleet-replicas", "3"}
	var followers []*proc
	for range 2 {
		d := start(t, newDir(t, map[string]string{"reduce.yaml": fleetSpec}),
			append(fleetArgs, "--fleet-trust", trust, "--fleet-wait", "10m")...)
		followers = append(followers, d)
	}

	// Each follower long-polls every problem until it serves a fleet config.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var mu sync.Mutex
	first := map[[2]int]seen{}
	var wg sync.WaitGroup
	for fi, d := range followers {
		c := &client.Client{Socket: d.socket}
		for pi, p := range fleetProblems {
			wg.Go(func() {
				etag := ""
				for ctx.Err() == nil {
					cfg, tag, changed, err := c.WatchConfig(ctx, "reduce", p, "", etag, 30*time.Second)
					at := time.Now()
					if err != nil {
						if ctx.Err() == nil {
							t.Errorf("follower %d problem %s: %v", fi, p, err)
						}
						return
					}
					// (A fleet offer of a nearer problem may be answered
					// first, match nearest, until the job's own arrives.)
					if changed && cfg.Source == api.SourceFleet && cfg.Certificate != "" && cfg.Match == api.MatchExact {
						mu.Lock()
						first[[2]int{fi, pi}] = seen{at: at, cert: cfg.Certificate, cfg: cfg}
						mu.Unlock()
						return
					}
					etag = tag
				}
			})
		}
	}

	// An R3 bucket needs all three servers to be created: only once it is
	// does one die, while the tuner publishes.
	cl.WaitBucket(t, "quasim-fleet-itest", 30*time.Second)
	a := start(t, dirA, append(fleetArgs, "--fleet-trust", filepath.Join(t.TempDir(), "none"))...)
	if kill {
		cl.Kill(1)
	}
	ca := &client.Client{Socket: a.socket}
	promoted := map[string]api.Config{}
	for _, p := range fleetProblems {
		promoted[p] = waitServedKernel(t, a, "reduce", p)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var lat []time.Duration
	for fi := range followers {
		for pi, p := range fleetProblems {
			s, ok := first[[2]int{fi, pi}]
			want := promoted[p]
			if !ok {
				t.Fatalf("follower %d never served problem %s from the fleet", fi, p)
			}
			if s.cert != want.Certificate || s.cfg.Key != want.Key || s.cfg.Issuer != issuer ||
				s.cfg.Match != api.MatchExact {
				t.Fatalf("follower %d at %s served %+v; want the tuner's %s (%s) with its issuer", fi, p, s.cfg, want.Certificate, want.Key)
			}
			lat = append(lat, s.at.Sub(*want.PromotedAt))
		}
	}
	slices.Sort(lat)
	q := func(f float64) time.Duration { return lat[min(len(lat)-1, int(f*float64(len(lat))))] }
	t.Logf("fleet promotion to serving on a follower: n=%d p50=%s p99=%s max=%s", len(lat), q(0.50), q(0.99), lat[len(lat)-1])

	// Each follower verifies each config here, and tunes nothing itself.
	for fi, d := range followers {
		c := &client.Client{Socket: d.socket}
		for _, p := range fleetProblems {
			deadline := time.Now().Add(testload.Scale(60 * time.Second))
			for {
				cfg, err := c.Config(context.Background(), "reduce", p, "")
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Source != api.SourceFleet {
					t.Fatalf("follower %d at %s: source %q, want fleet: %+v", fi, p, cfg.Source, cfg)
				}
				if cfg.Verification == api.VerifyPassed {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("follower %d at %s: verification %q after 60s", fi, p, cfg.Verification)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		cy, err := c.Cycles(context.Background(), "reduce")
		if err != nil {
			t.Fatal(err)
		}
		if len(cy.Cycles) != 0 {
			t.Errorf("follower %d ran %d cycles, want none: it serves the fleet's configs", fi, len(cy.Cycles))
		}
		var st api.FleetStatus
		d.ctlJSON(&st, "fleet", "status")
		n := len(fleetProblems)
		// Verified counts checks at a problem a nearer job's config
		// answered while its own was on the way too: at least one a job.
		if !st.Enabled || st.Fleet != "itest" || len(st.Node) != 32 || st.Received != n || st.ServedFromFleet != n ||
			st.Verified < n || st.VerifyFailures != 0 || st.Peers != 1 || len(st.Trusted) != 2 {
			t.Errorf("follower %d: fleet status %+v, want %d configs received, served and verified from 1 peer", fi, st, n)
		}
		if out, _, code := d.ctl("config", "reduce", "--problem", "65536"); code != 0 || !strings.Contains(out, "source:        fleet (issuer "+issuer+")") {
			t.Errorf("config = exit %d, want it to name the fleet and the issuer:\n%s", code, out)
		}
		if code, body := d.rawGet("/metrics"); code != 200 || !strings.Contains(string(body), "quasim_fleet_served_jobs 8\n") ||
			!strings.Contains(string(body), fmt.Sprintf(`quasim_fleet_verifications_total{result="passed"} %d`, st.Verified)) {
			t.Errorf("GET /metrics = %d, want the fleet gauges:\n%s", code, body)
		}
		if out, _, code := d.ctl("fleet", "status"); code != 0 || !regexp.MustCompile(`served from fleet: +8\n`).MatchString(out) {
			t.Errorf("fleet status = exit %d:\n%s", code, out)
		}
	}
	if _, err := ca.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !kill {
		records := cl.Entries(t, "quasim-fleet-itest", ">")
		msgs := cl.Messages(t, fleet.Stream("itest"))
		if len(msgs) < len(fleetProblems) {
			t.Errorf("%d trial summaries on the stream, want at least one per job", len(msgs))
		}
		// The tuner's contribution to the aggregate verifies and ranks every
		// config it measured ok.
		aggs := cl.Entries(t, "quasim-fleet-itest", "agg.>")
		keys, _ := fleet.LoadTrustDir(trust)
		for k, v := range aggs {
			c, err := fleet.CheckContribution(fleet.NewTrust(keys...), k, v)
			if err != nil || c.Kernel != "reduce" || c.Problems != len(fleetProblems) || len(c.Quantiles) == 0 {
				t.Errorf("contribution %s: %+v, %v", k, c, err)
			}
		}
		if len(aggs) != 1 {
			t.Errorf("%d contributions to the aggregate, want the tuner's", len(aggs))
		}
		for i, m := range msgs {
			records[fmt.Sprintf("stream message %d", i)] = m
		}
		noPrivateData(t, records, append(followers, a)...)

		// A follower whose operator drops the tuner's key stops serving
		// its configs once it reloads.
		f0 := followers[0]
		if err := os.Remove(filepath.Join(trust, "a.pub")); err != nil {
			t.Fatal(err)
		}
		if _, errs, code := f0.ctl("reload"); code != 0 {
			t.Fatalf("reload: exit %d: %s", code, errs)
		}
		waitConfig(t, &client.Client{Socket: f0.socket}, "reduce", "65536", func(c api.Config) bool { return c.Source != api.SourceFleet })
	}
	for _, d := range append(followers, a) {
		d.stop()
	}
}

// noPrivateData fails t if a string in a record names the machine's host,
// its user, a path of one of the nodes, or an IP address; signatures are
// left out (base64 can spell anything).
func noPrivateData(t *testing.T, records map[string][]byte, nodes ...*proc) {
	t.Helper()
	host, _ := os.Hostname()
	var secrets []string
	if host != "" {
		secrets = append(secrets, host)
	}
	if u, err := user.Current(); err == nil {
		secrets = append(secrets, u.Username, u.HomeDir)
	}
	for _, d := range nodes {
		secrets = append(secrets, d.dir, d.socket, os.TempDir())
	}
	ip := regexp.MustCompile(`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`)
	n := 0
	for k, v := range records {
		var doc any
		if k == "meta.salt" {
			continue
		}
		if err := json.Unmarshal(v, &doc); err != nil {
			t.Fatalf("record %s is not JSON: %v", k, err)
		}
		walkStrings(doc, "", func(field, s string) {
			n++
			if field == "signature" {
				return
			}
			for _, x := range secrets {
				if x != "" && x != "/" && strings.Contains(s, x) {
					t.Errorf("record %s field %s holds %q: %q", k, field, x, s)
				}
			}
			if ip.MatchString(s) {
				t.Errorf("record %s field %s holds an IP address: %q", k, field, s)
			}
		})
	}
	t.Logf("privacy: %d records, %d strings checked for host, user, paths and IP addresses", len(records), n)
}

// walkStrings calls f with every string in a decoded JSON value, object
// keys included, and the name of the field that holds it.
func walkStrings(v any, field string, f func(field, s string)) {
	switch x := v.(type) {
	case string:
		f(field, x)
	case []any:
		for _, e := range x {
			walkStrings(e, field, f)
		}
	case map[string]any:
		for k, e := range x {
			f(field, k)
			walkStrings(e, k, f)
		}
	}
}

// trustKeyOf creates the issuer key of the node whose directory is dir and
// writes its public key to a new trust directory, which it returns.
func trustKeyOf(t *testing.T, dir string) (string, string) {
	t.Helper()
	key, _, err := certs.LoadOrCreateKey(filepath.Join(dir, "state", "issuer.key"))
	if err != nil {
		t.Fatal(err)
	}
	pub := key.Public().(ed25519.PublicKey)
	trust := filepath.Join(t.TempDir(), "trust.d")
	os.MkdirAll(trust, 0o755)
	if err := os.WriteFile(filepath.Join(trust, "a.pub"), []byte(certs.FormatPublicKey(pub)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return trust, certs.KeyID(pub)
}

// A follower on which the tuner's config computes a wrong result (the
// harness is broken there only) never serves it once its verification
// failed, records it wrong_result, publishes the failure and tunes for
// itself; the other follower serves and verifies the config as before.
func TestFleetLocalVerificationFails(t *testing.T) {
	t.Parallel()
	binaries(t)
	bin := filepath.Join(t.TempDir(), "fakeharness")
	if out, err := exec.Command("go", "build", "-o", bin, "../../evaluate/harness/testdata/fakeharness").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	spec := "name: fake\nevaluator: exec:" + bin + "\nproblems: [\"64\"]\nschedule: \"@every 24h\"\nbudget: {evals: 4}\ntimeout: 20s\n"
	cl := fleettest.Start(t, 3)
	dirA := newDir(t, map[string]string{"fake.yaml": spec})
	trust, issuer := trustKeyOf(t, dirA)
	args := []string{"--fleet", strings.Join(cl.URLs(), ","), "--fleet-name", "vtest", "--fleet-replicas", "3", "--fleet-wait", "10m", "--fleet-trust", trust}
	// FAKE_WRONG reaches the broken follower's harness only.
	broken := startWith(t, newDir(t, map[string]string{"fake.yaml": spec}), withEnv("FAKE_MODES=ok", "FAKE_WRONG=1"), args...)
	good := startWith(t, newDir(t, map[string]string{"fake.yaml": spec}), withEnv("FAKE_MODES=ok"), args...)
	cl.WaitBucket(t, "quasim-fleet-vtest", 30*time.Second)
	a := startWith(t, dirA, withEnv("FAKE_MODES=ok"), "--fleet", strings.Join(cl.URLs(), ","), "--fleet-name", "vtest")
	want := waitServedKernel(t, a, "fake", "64")
	if want.Key == "ok,2" {
		t.Fatalf("the tuner serves the default config %s: the broken follower could not tell", want.Key)
	}

	// The good follower verifies it.
	cg := &client.Client{Socket: good.socket}
	waitConfig(t, cg, "fake", "64", func(c api.Config) bool {
		return c.Source == api.SourceFleet && c.Certificate == want.Certificate && c.Issuer == issuer && c.Verification == api.VerifyPassed
	})

	// The broken one records the failure, and then answers its own.
	cb := &client.Client{Socket: broken.socket}
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		tr, err := cb.Trials(context.Background(), "fake", "64")
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(tr.Trials, func(x api.Trial) bool { return x.Key == want.Key && x.Status == "wrong_result" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broken follower recorded no wrong_result for %s in 60s: %+v", want.Key, tr.Trials)
		}
		time.Sleep(50 * time.Millisecond)
	}
	own := waitConfig(t, cb, "fake", "64", func(c api.Config) bool { return c.Source == "" && c.Match == api.MatchExact && c.Certificate != "" })
	if own.Key == want.Key {
		t.Fatalf("the broken follower serves %s, which failed there", own.Key)
	}
	if c, err := cb.Config(context.Background(), "fake", "64", ""); err != nil || c.Source == api.SourceFleet {
		t.Fatalf("broken follower: %+v, %v", c, err)
	}
	// Its failure is in the fleet, signed by it.
	fails := cl.Entries(t, "quasim-fleet-vtest", "fail."+want.Certificate+".>")
	if len(fails) != 1 {
		t.Fatalf("failure reports of %s: %v, want one", want.Certificate, fails)
	}
	var st api.FleetStatus
	broken.ctlJSON(&st, "fleet", "status")
	if st.VerifyFailures != 1 || st.ServedFromFleet != 0 {
		t.Errorf("broken follower: fleet status %+v, want 1 verification failure and nothing served from the fleet", st)
	}
	// The others are not affected.
	if c, err := cg.Config(context.Background(), "fake", "64", ""); err != nil || c.Certificate != want.Certificate || c.Verification != api.VerifyPassed {
		t.Fatalf("good follower after the failure: %+v, %v", c, err)
	}
	for _, d := range []*proc{broken, good, a} {
		d.stop()
	}
}

// waitConfig polls kernel at problem until ok accepts the answer, or fails
// after 60 s.
func waitConfig(t *testing.T, c *client.Client, kernel, problem string, ok func(api.Config) bool) api.Config {
	t.Helper()
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		cfg, err := c.Config(context.Background(), kernel, problem, "")
		if err != nil {
			t.Fatal(err)
		}
		if ok(cfg) {
			return cfg
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s at %s after 60s: %+v", kernel, problem, cfg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A tuner killed (SIGKILL) while it publishes leaves no partial record:
// every offer in the bucket verifies, and once restarted it publishes
// what it promoted and had not published, so a follower serves it all.
func TestFleetTunerKilledMidPublish(t *testing.T) {
	t.Parallel()
	binaries(t)
	cl := fleettest.Start(t, 3)
	dirA := newDir(t, map[string]string{"reduce.yaml": fleetSpec})
	trust, _ := trustKeyOf(t, dirA)
	args := []string{"--fleet", strings.Join(cl.URLs(), ","), "--fleet-name", "ktest", "--fleet-replicas", "3"}
	b := start(t, newDir(t, map[string]string{"reduce.yaml": fleetSpec}), append(args, "--fleet-trust", trust, "--fleet-wait", "10m")...)
	cl.WaitBucket(t, "quasim-fleet-ktest", 30*time.Second)
	a := start(t, dirA, args...)
	// Killed as soon as its first offer is in the bucket.
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for len(cl.Entries(t, "quasim-fleet-ktest", "cert.>")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no offer published in 60s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.kill()
	offers := cl.Entries(t, "quasim-fleet-ktest", "cert.>")
	for k, v := range offers {
		if _, err := fleetCheck(trust, k, v); err != nil {
			t.Errorf("offer %s left by the killed tuner: %v", k, err)
		}
	}
	t.Logf("%d of %d offers published before the kill", len(offers), len(fleetProblems))
	a = start(t, dirA, args...)
	cb := &client.Client{Socket: b.socket}
	for _, p := range fleetProblems {
		want := waitServedKernel(t, a, "reduce", p)
		waitConfig(t, cb, "reduce", p, func(c api.Config) bool { return c.Source == api.SourceFleet && c.Certificate == want.Certificate })
	}
	a.stop()
	b.stop()
}

// fleetCheck checks the offer at key with the keys of trust dir.
func fleetCheck(dir, key string, value []byte) (fleet.Verified, error) {
	keys, err := fleet.LoadTrustDir(dir)
	if err != nil {
		return fleet.Verified{}, err
	}
	return fleet.CheckOffer(fleet.NewTrust(keys...), key, value)
}

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/internal/testload"
)

const inferPipeline = "pipeline: infer\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 1e-3}, inputs: positive}\n"

// zoningCert finds certificate id in quasimctl certs list.
func zoningCert(t *testing.T, d *proc, id string) api.CertSummary {
	t.Helper()
	var list api.Certs
	d.ctlJSON(&list, "certs", "list", "--kernel", "pipeline/infer")
	for _, cs := range list.Certs {
		if cs.ID == id {
			return cs
		}
	}
	t.Fatalf("certs list --kernel pipeline/infer has no %s: %+v", id, list.Certs)
	return api.CertSummary{}
}

// A zoned pipeline's tuned map is kept in the state file, and its
// certificate in the certificate store: quasimctl certs lists and
// verifies it, a restart serves the same certified map at once without
// measuring, a reload that leaves the zoning section as it was keeps it,
// and one that changes the section tunes again. Bad stored bytes are
// named by quasimctl db check, and the next start tunes that pipeline
// again.
func TestZoningPersists(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the daemon")
	}
	dir := newDir(t, map[string]string{"conv2d.yaml": zoneConvSpec, "reduce.yaml": zoneReduceSpec, "infer.yaml": inferPipeline})
	d := start(t, dir)
	conv := waitServedKernel(t, d, "conv2d", "48,52,5")
	red := waitServed(t, d, "65536")
	z := waitZoned(t, d, "infer", conv, red)
	if z.CertificateID == "" || z.Restored {
		t.Fatalf("tuned zoning: certificate id %q, restored %v", z.CertificateID, z.Restored)
	}
	// The certificate store holds the map's certificate: listed as the
	// served one, and it verifies against the daemon's key.
	if cs := zoningCert(t, d, z.CertificateID); !cs.Served || cs.Revoked || cs.Key != z.Map.Key() {
		t.Errorf("listed %+v, want served, live, keyed by the map", cs)
	}
	if out, errs, code := d.ctl("certs", "verify", z.CertificateID); code != 0 || !strings.Contains(out, "error_budget") {
		t.Fatalf("certs verify %s: exit %d\n%s%s", z.CertificateID, code, out, errs)
	}
	d.stop()

	// A restart serves the stored map at once: no tuning in the new log.
	d = start(t, dir)
	var again api.Zoning
	d.ctlJSON(&again, "zoning", "infer")
	if again.State != api.ZoningDone || !again.Restored || again.CertificateID != z.CertificateID || !again.TunedAt.Equal(z.TunedAt) ||
		again.Map == nil || again.Map.Stages[1].Key != z.Map.Stages[1].Key {
		t.Fatalf("after a restart: %+v, want the stored map of %s served", again, z.TunedAt)
	}
	var c api.Config
	d.ctlJSON(&c, "config", "reduce", "--problem", "65536")
	if len(c.Zones) != 1 || c.Zones[0].Key != z.Map.Stages[1].Key {
		t.Errorf("reduce lookup after a restart carries %+v, want infer's stage %s", c.Zones, z.Map.Stages[1].Key)
	}
	// A reload after an edit outside the zoning section keeps the map.
	kd := filepath.Join(dir, "kernels.d")
	if err := os.WriteFile(filepath.Join(kd, "infer.yaml"), []byte("# edited\n"+inferPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	d.ctl("reload")
	again = api.Zoning{} // ctlJSON leaves the fields the answer omits as they were
	d.ctlJSON(&again, "zoning", "infer")
	if again.State != api.ZoningDone || again.CertificateID != z.CertificateID {
		t.Errorf("after a reload with the same section: %+v", again)
	}
	if strings.Contains(d.stderr.String(), "zoning tuned") {
		t.Errorf("the restarted daemon measured the maps again:\n%s", tail(d.stderr.String(), 3000))
	}
	// A changed section tunes again.
	if err := os.WriteFile(filepath.Join(kd, "infer.yaml"), []byte(strings.Replace(inferPipeline, "1e-3", "5e-4", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	d.ctl("reload")
	again = api.Zoning{}
	d.ctlJSON(&again, "zoning", "infer", "--wait", "60s")
	if again.State != api.ZoningDone || again.Restored || !again.TunedAt.After(z.TunedAt) || again.Budget.Value != 5e-4 {
		t.Fatalf("after a changed section: %+v, want tuned again at 5e-4", again)
	}
	d.stop()

	// Bad bytes in the stored zoning: db check names the record, the
	// next start tunes again and loses nothing else.
	db := filepath.Join(dir, "state", "quasim.db")
	bdb, err := bolt.Open(db, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("v1")).Bucket([]byte("zonings")).Put([]byte("infer"), []byte(`{"v":1,"pipeline":"infer","result":`))
	})
	bdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(d.quasimct, "db", "check", "--db", db).CombinedOutput()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), `v1/zonings/"infer"`) {
		t.Errorf("db check of a bad zoning: %v\n%s", err, out)
	}
	d = start(t, dir)
	again = api.Zoning{}
	d.ctlJSON(&again, "zoning", "infer", "--wait", "60s")
	if again.State != api.ZoningDone || again.Restored || again.Map == nil {
		t.Errorf("after bad stored bytes: %+v, want tuned again", again)
	}
	if !strings.Contains(d.stderr.String(), `v1/zonings/\"infer\"`) {
		t.Errorf("the log does not name the bad record:\n%s", tail(d.stderr.String(), 3000))
	}
	if cs := zoningCert(t, d, z.CertificateID); cs.Revoked {
		t.Errorf("the first map's certificate after the restarts: %+v", cs)
	}
	d.stop()
}

// A runtime reporting an error above the bound a zoned map certified for
// its kernel's stage makes the real daemon revoke the map's certificate:
// the lookups stop carrying the map at once (the next certified map, or
// none) and the tuning queued serves a new certified map, never the
// revoked one. An error within the bound revokes nothing.
func TestZonedErrorFallback(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the daemon")
	}
	// The reduce's reports are relative errors (its job's budget is rel)
	// at the problem it runs at in the chain: conv2d's 44x48 outputs.
	reduce := strings.Replace(zoneReduceSpec, `problems: ["65536"]`, `problems: ["65536", "2112"]`+"\nverify: {inputs: positive, error_budget: {rel: 1e-3}}", 1)
	d := start(t, newDir(t, map[string]string{"conv2d.yaml": zoneConvSpec, "reduce.yaml": reduce, "infer.yaml": inferPipeline}))
	conv := waitServedKernel(t, d, "conv2d", "48,52,5")
	red := waitServed(t, d, "65536")
	z := waitZoned(t, d, "infer", conv, red)
	st := z.Map.Stages[1]
	bad := z.Map.Key()
	t.Logf("served map %s: reduce stage limit %.3g %s at %s, %d maps certified", bad, st.Limit, st.Unit, st.Problem, z.Passed)
	c := &client.Client{Socket: d.socket}
	ctx := context.Background()
	obs := func(e float64) api.ObservationsRequest {
		return api.ObservationsRequest{Observations: []api.Observation{{Kernel: "reduce", Problem: st.Problem, Key: st.Key, LatenciesMS: []float64{0.1}, Source: "test", Error: e}}}
	}
	if resp, err := c.Observe(ctx, obs(st.Limit)); err != nil || slices.Contains(resp.Revoked, z.CertificateID) {
		t.Fatalf("error at the limit: %+v, %v; want %s kept", resp, err, z.CertificateID)
	}
	posted := time.Now()
	// (The reduce job's own certificate at 2112 may go too, when its
	// config is the stage's and its bound lower.)
	resp, err := c.Observe(ctx, obs(2*st.Limit))
	if err != nil || !slices.Contains(resp.Revoked, z.CertificateID) {
		t.Fatalf("error at twice the bound: %+v, %v; want %s revoked", resp, err, z.CertificateID)
	}
	// At once: the lookups carry no revoked map.
	stages := map[string]string{}
	for _, k := range []struct{ kernel, problem string }{{"conv2d", "48,52,5"}, {"reduce", "65536"}} {
		var cfg api.Config
		d.ctlJSON(&cfg, "config", k.kernel, "--problem", k.problem)
		for _, zs := range cfg.Zones {
			stages[k.kernel] = zs.Kernel + " " + zs.Key
		}
	}
	if stages["conv2d"]+" | "+stages["reduce"] == bad {
		t.Fatalf("after the revocation the lookups still carry the revoked map %s", bad)
	}
	var now api.Zoning
	d.ctlJSON(&now, "zoning", "infer")
	if len(now.Revoked) != 1 || now.Revoked[0] != bad || (now.Map != nil && now.Map.Key() == bad) {
		t.Fatalf("after the revocation: revoked %q, map %+v", now.Revoked, now.Map)
	}
	if now.Map != nil {
		t.Logf("fell back at once to %s (certificate %s)", now.Map.Key(), now.CertificateID)
		if out, errs, code := d.ctl("certs", "verify", now.CertificateID); code != 0 {
			t.Errorf("certs verify of the fallback: exit %d\n%s%s", code, out, errs)
		}
	}
	if out, _, code := d.ctl("zoning", "infer"); code != 0 || !strings.Contains(out, "revoked, never served again: "+bad) ||
		(now.Map != nil && !strings.Contains(out, "runtime limit: reduce at 2112 "+now.Map.Stages[1].Key+": error ")) {
		t.Errorf("quasimctl zoning infer after the revocation: exit %d\n%s", code, out)
	}
	if cs := zoningCert(t, d, z.CertificateID); !cs.Revoked || cs.Served || !strings.Contains(cs.Reason, "above the bound") {
		t.Errorf("revoked certificate listed as %+v", cs)
	}
	if _, errs, code := d.ctl("certs", "verify", z.CertificateID); code == 0 || !strings.Contains(errs, "revoked") {
		t.Errorf("certs verify of the revoked certificate: exit %d %s", code, errs)
	}
	// The tuning queued serves a new certified map, never the revoked one.
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		now = api.Zoning{} // ctlJSON leaves the fields the answer omits as they were
		d.ctlJSON(&now, "zoning", "infer")
		if now.State == api.ZoningDone && now.TunedAt.After(z.TunedAt) {
			break
		}
		if now.State == api.ZoningFailed || time.Now().After(deadline) {
			t.Fatalf("no new tuning within 60s of the report: %+v", now)
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(posted)
	if now.Map == nil || now.Map.Key() == bad || now.CertificateID == z.CertificateID || len(now.Revoked) != 1 {
		t.Fatalf("after the tuning: map %+v, certificate %s, revoked %q", now.Map, now.CertificateID, now.Revoked)
	}
	t.Logf("re-tuned map %s served %.3gs after the report (%d maps certified)", now.Map.Key(), took.Seconds(), now.Passed)
	var cfg api.Config
	d.ctlJSON(&cfg, "config", "reduce", "--problem", "65536")
	if len(cfg.Zones) != 1 || cfg.Zones[0].Key != now.Map.Stages[1].Key {
		t.Errorf("reduce lookup after the tuning carries %+v, want %s", cfg.Zones, now.Map.Stages[1].Key)
	}
	// An operator's revocation of the served map's certificate drops it
	// the same way.
	second := now.Map.Key()
	if out, errs, code := d.ctl("certs", "revoke", now.CertificateID, "--reason", "operator test"); code != 0 {
		t.Fatalf("certs revoke %s: exit %d\n%s%s", now.CertificateID, code, out, errs)
	}
	after := api.Zoning{}
	d.ctlJSON(&after, "zoning", "infer")
	if (after.Map != nil && after.Map.Key() == second) || !slices.Contains(after.Revoked, second) {
		t.Errorf("after an operator's revocation of %s: map %+v, revoked %q", second, after.Map, after.Revoked)
	}
}

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/internal/testload"
)

// A runtime reporting an error above the bound a served map's certificate
// records makes the real daemon revoke it, fall back at once (to the next
// certified map, or the default) and serve a new certified map after the
// next cycle. An error within the bound, or a bad one, revokes nothing.
func TestErrorFallback(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the daemon")
	}
	spec := reduceSpec + "parameters: {block: [16384], workers: [1], unroll: [8], acc: [float32], input: [fp32, half]}\n" +
		"verify: {error_budget: {rel: 1e-3}, inputs: positive}\n"
	d := start(t, newDir(t, map[string]string{"reduce.yaml": spec}))
	served := waitServed(t, d, "65536")
	c := &client.Client{Socket: d.socket}
	ctx := context.Background()
	cert := fetchCert(t, c, served.Certificate)
	bound := 0.0
	for _, ch := range cert.Checks {
		if ch.Name == "error_budget" && ch.Passed {
			bound, _ = ch.Results["bound"].(float64)
		}
	}
	if !(bound > 0 && bound <= 1e-3) {
		t.Fatalf("served %s: certificate has no error_budget bound in (0, 1e-3]: %+v", served.Key, cert.Checks)
	}
	t.Logf("served %s, certified bound %.4g", served.Key, bound)
	obs := func(e float64) api.Observation {
		return api.Observation{Kernel: "reduce", Problem: "65536", Key: served.Key, LatenciesMS: []float64{1}, Source: "test", Error: e}
	}
	// Bad errors name the field and store nothing; one within the bound
	// is stored and revokes nothing.
	if _, err := c.Observe(ctx, api.ObservationsRequest{Observations: []api.Observation{obs(bound), obs(-1)}}); err == nil || !strings.Contains(err.Error(), "observations[1].error") {
		t.Errorf("negative error: %v, want an error naming observations[1].error", err)
	}
	resp, err := c.Observe(ctx, api.ObservationsRequest{Observations: []api.Observation{obs(bound)}})
	if err != nil || resp.Stored != 1 || len(resp.Revoked) != 0 {
		t.Fatalf("error at the bound: %+v, %v; want stored, nothing revoked", resp, err)
	}
	// Above the bound: revoked, and the answer changes at once.
	posted := time.Now()
	resp, err = c.Observe(ctx, api.ObservationsRequest{Observations: []api.Observation{obs(2 * bound)}})
	if err != nil || len(resp.Revoked) != 1 || resp.Revoked[0] != served.Certificate {
		t.Fatalf("error at twice the bound: %+v, %v; want %s revoked", resp, err, served.Certificate)
	}
	var now api.Config
	d.ctlJSON(&now, "config", "reduce", "--problem", "65536")
	if now.Certificate == served.Certificate || (now.Match == api.MatchExact && now.Key == served.Key) {
		t.Fatalf("after the revocation the daemon answers %+v, still the revoked %s", now, served.Key)
	}
	t.Logf("fell back to %s (match %s, certificate %q)", now.Key, now.Match, now.Certificate)
	var list api.Certs
	d.ctlJSON(&list, "certs", "list")
	found := false
	for _, cs := range list.Certs {
		if cs.ID == served.Certificate {
			found = true
			if !cs.Revoked || !strings.Contains(cs.Reason, "above its certified bound") {
				t.Errorf("certificate %s: revoked %v, reason %q", cs.ID, cs.Revoked, cs.Reason)
			}
		}
	}
	if !found {
		t.Errorf("certs list has no %s: %+v", served.Certificate, list.Certs)
	}
	// The re-tune certifies another map; the revoked one is never served again.
	deadline := time.Now().Add(testload.Scale(90 * time.Second))
	for {
		var cycles api.Cycles
		d.ctlJSON(&cycles, "cycles", "reduce")
		done := false
		for _, cy := range cycles.Cycles {
			done = done || (cy.Trigger == "error" && cy.State == "done")
		}
		d.ctlJSON(&now, "config", "reduce", "--problem", "65536")
		if done && now.Match == api.MatchExact && now.Certificate != "" {
			if now.Key == served.Key || now.Certificate == served.Certificate {
				t.Fatalf("after the error cycle the revoked map is served: %+v", now)
			}
			t.Logf("new certified map %s served %.3gs after the report", now.Key, time.Since(posted).Seconds())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new certified map within 90s of the report: %+v, cycles %+v", now, cycles.Cycles)
		}
		time.Sleep(100 * time.Millisecond)
	}
	code, body := d.rawGet("/metrics")
	if code != 200 || !strings.Contains(string(body), `quasim_error_revocations_total{kernel="reduce"} 1`) {
		t.Errorf("GET /metrics: %d, no error revocation counted", code)
	}
}

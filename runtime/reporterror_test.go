package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/runtime"
)

// A runtime that reports an error above the served map's certified bound
// gets told the certificate was revoked, and its next Lookup answers the
// daemon's new choice rather than the cached, revoked map.
func TestReportError(t *testing.T) {
	sock, _ := startDaemonFiles(t, map[string]string{"rbud.yaml": "name: rbud\nevaluator: builtin:reduce\nproblems: [\"65536\"]\n" +
		"schedule: \"@every 1h\"\nbudget: {evals: 6}\n" +
		"parameters: {block: [16384], workers: [1], unroll: [8], acc: [float32], input: [fp32, half]}\n" +
		"verify: {error_budget: {rel: 1e-3}, inputs: positive}\n"})
	ctx := context.Background()
	c := &client.Client{Socket: sock}
	var served api.Config
	for deadline := time.Now().Add(60 * time.Second); served.Certificate == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("rbud: no certified config within 60s")
		}
		served, _ = c.Config(ctx, "rbud", "65536", "")
	}
	rt := runtime.New(runtime.Options{Socket: sock, TTL: time.Hour})
	if res := rt.Lookup(ctx, "rbud", []int{65536}, defaults); res.Key != served.Key {
		t.Fatalf("Lookup = %+v, want %s", res, served.Key)
	}
	// Within the budget's rel 1e-3 (every served map's bound is under it
	// by construction, but 1e-12 is under any bound above 0): kept.
	if revoked, err := rt.ReportError(ctx, "rbud", []int{65536}, served.Key, []float64{0.01}, 1e-12); err != nil || revoked {
		t.Fatalf("ReportError(1e-12) = %v, %v; want kept", revoked, err)
	}
	if _, err := rt.ReportError(ctx, "rbud", []int{65536}, served.Key, []float64{0.01}, -1); err == nil {
		t.Error("ReportError(-1) succeeded")
	}
	revoked, err := rt.ReportError(ctx, "rbud", []int{65536}, served.Key, []float64{0.01}, 0.5)
	if err != nil || !revoked {
		t.Fatalf("ReportError(0.5) = %v, %v; want revoked", revoked, err)
	}
	res := rt.Lookup(ctx, "rbud", []int{65536}, defaults)
	if res.Certificate == served.Certificate {
		t.Errorf("Lookup after the revocation = %+v, still the revoked certificate %s", res, served.Certificate)
	}
}

package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/testload"
)

const zoneConvSpec = `name: conv2d
evaluator: builtin:conv2d
problems: ["48,52,5"]
schedule: "@every 1h"
budget: {evals: 4}
parameters: {workers: [1]}
`

const zoneReduceSpec = `name: reduce
evaluator: builtin:reduce
problems: ["65536"]
schedule: "@every 1h"
budget: {evals: 4}
parameters: {block: [256, 1024], workers: [1]}
`

// A real daemon tunes a zoned pipeline (conv2d feeding reduce, one error
// budget for the chain) once the kernels serve configs: the map served
// fits the budget by its composed bound and its measured error, its
// signed certificate verifies against the daemon's key and records each
// stage's bound, and config lookups of both kernels carry their stage of
// the map. A second pipeline at a budget nothing fits serves no map, and
// adds nothing to the lookups; a third, its chain reversed, fails saying
// why.
func TestZonedPipelineServed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the daemon")
	}
	dir := newDir(t, map[string]string{
		"conv2d.yaml": zoneConvSpec,
		"reduce.yaml": zoneReduceSpec,
		"infer.yaml":  "pipeline: infer\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 1e-3}, inputs: positive}\n",
		"tight.yaml":  "pipeline: tight\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 1e-12}, inputs: positive}\n",
		"bad.yaml":    "pipeline: bad\nkernels: [conv2d, reduce]\nzoning: {chain: [reduce, conv2d], error_budget: {rel: 1e-3}}\n",
	})
	d := start(t, dir)
	conv := waitServedKernel(t, d, "conv2d", "48,52,5")
	red := waitServed(t, d, "65536")

	z := waitZoned(t, d, "infer", conv, red)
	m := z.Map
	if z.Maps < 2 || z.Passed < 1 || !(m.Bound <= 1e-3) || !(m.Measured <= m.Bound) || len(m.Stages) != 2 ||
		m.Stages[0].Kernel != "conv2d" || m.Stages[1].Kernel != "reduce" || m.Stages[0].Precision["input"] == "" || m.Stages[1].Precision["acc"] == "" ||
		!(m.Stages[0].Bound+m.Stages[1].Bound <= m.Bound*(1+1e-12)) || len(m.Stages[1].Parts) == 0 {
		t.Fatalf("zoning %+v, map %+v", z, m)
	}
	t.Logf("served map %s | %s: bound %.3g (%.3g + %.3g), measured %.3g, %.3f ms; %d of %d maps certified",
		m.Stages[0].Key, m.Stages[1].Key, m.Bound, m.Stages[0].Bound, m.Stages[1].Bound, m.Measured, m.TimeMS, z.Passed, z.Maps)

	// The certificate verifies against the daemon's key and records the
	// stages.
	cf := filepath.Join(t.TempDir(), "zone-cert.json")
	if err := os.WriteFile(cf, []byte(z.Certificate), 0o600); err != nil {
		t.Fatal(err)
	}
	var pk api.Pubkey
	d.ctlJSON(&pk, "certs", "pubkey")
	if out, errs, code := d.ctl("certs", "verify", "--file", cf, "--pubkey", pk.Pubkey); code != 0 {
		t.Fatalf("certs verify: exit %d %s %s", code, out, errs)
	}
	body := z.Certificate
	for _, want := range []string{`"error_budget"`, `"conv2d.input"`, `"reduce.acc"`, `"measured_err"`, `"pipeline/infer"`} {
		if !strings.Contains(body, want) {
			t.Errorf("certificate lacks %s:\n%s", want, body)
		}
	}

	// Lookups carry the map: each kernel's stage in infer, none from tight.
	var tight api.Zoning
	d.ctlJSON(&tight, "zoning", "tight", "--wait", "30s")
	if tight.State != api.ZoningDone || tight.Map != nil || tight.Passed != 0 {
		t.Errorf("tight: %+v", tight)
	}
	// A chain zoning cannot compose fails, naming the file and why.
	var bad api.Zoning
	d.ctlJSON(&bad, "zoning", "bad", "--wait", "30s")
	if bad.State != api.ZoningFailed || !strings.Contains(bad.Error, "bad.yaml") || !strings.Contains(bad.Error, "reduce -> conv2d") {
		t.Errorf("bad: %+v", bad)
	}
	for i, k := range []struct{ kernel, problem string }{{"conv2d", "48,52,5"}, {"reduce", "65536"}} {
		var c api.Config
		d.ctlJSON(&c, "config", k.kernel, "--problem", k.problem)
		if len(c.Zones) != 1 || c.Zones[0].Pipeline != "infer" || c.Zones[0].Key != m.Stages[i].Key ||
			!maps.Equal(c.Zones[0].Precision, m.Stages[i].Precision) {
			t.Errorf("%s lookup zones %+v, want infer's %+v", k.kernel, c.Zones, m.Stages[i])
		}
	}
	if out, _, code := d.ctl("zoning", "infer"); code != 0 || !strings.Contains(out, "served") || !strings.Contains(out, "conv2d{input=") {
		t.Errorf("quasimctl zoning infer: exit %d\n%s", code, out)
	}
	if _, errs, code := d.ctl("zoning", "nope"); code == 0 || !strings.Contains(errs, "not declared") {
		t.Errorf("zoning nope: exit %d %s", code, errs)
	}
}

// sameParams reports whether two config keys agree on every value but
// the last (the precision parameter that ends conv2d's and reduce's keys).
func sameParams(a, b string) bool {
	i, j := strings.LastIndex(a, ","), strings.LastIndex(b, ",")
	return i > 0 && j > 0 && a[:i] == b[:j]
}

// waitZoned waits for pipeline's map tuned at the served configs conv and
// red (a promotion tunes the chain again) and returns its zoning.
func waitZoned(t *testing.T, d *proc, pipeline string, conv, red api.Config) api.Zoning {
	t.Helper()
	var z api.Zoning
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		d.ctlJSON(&z, "zoning", pipeline)
		if z.State == api.ZoningDone && z.Map != nil && sameParams(z.Map.Stages[0].Key, conv.Key) && z.Default != nil && sameParams(z.Default.Stages[1].Key, red.Key) {
			return z
		}
		if z.State == api.ZoningFailed || time.Now().After(deadline) {
			t.Fatalf("zoning %+v; served conv2d %s, reduce %s", z, conv.Key, red.Key)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A job with an error budget is tuned over reduced precisions by a real
// daemon: the served map fits the budget (int8's bound, 7.9e-3 of the sum,
// does not fit rel 1e-3, so it is never served, even when it measured
// fastest), and its certificate records the map, each stage's bound and
// the measured error.
func TestPrecisionBudgetServed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the daemon")
	}
	spec := reduceSpec + "parameters: {block: [16384], workers: [1], unroll: [8], acc: [float32], input: [fp32, half, int8]}\n" +
		"verify: {error_budget: {rel: 1e-3}, inputs: positive}\n"
	dir := newDir(t, map[string]string{"reduce.yaml": spec})
	d := start(t, dir)
	served := waitServed(t, d, "65536")
	if in := served.Config["input"]; in != "fp32" && in != "fp16" {
		t.Fatalf("served %+v: input %v, want fp32 or fp16 (int8's bound is over the budget)", served, in)
	}
	ch := budgetCheck(t, d, served.Certificate)
	pm, _ := ch.Inputs["precision_map"].(map[string]any)
	bound, _ := ch.Results["bound"].(float64)
	meas, _ := ch.Results["measured_err"].(float64)
	stages, _ := ch.Results["stages"].([]any)
	if !ch.Passed || ch.Inputs["budget"] != 1e-3 || pm["input"] != served.Config["input"] || pm["acc"] != "float32" ||
		!(bound > 0 && bound <= 1e-3) || !(meas <= bound) || len(stages) != 3 {
		t.Errorf("error_budget check %+v", ch)
	}
	if out, _, _ := d.ctl("certs", "show", served.Certificate); !strings.Contains(out, "PASS error_budget") || !strings.Contains(out, "(budget 0.001 / bound") {
		t.Errorf("certs show:\n%s", out)
	}
}

// The C harness's fp16 storage of B, tuned by a real daemon under a rel
// 1e-2 budget: at 256 its a-priori bound (9.4e-3, from the harness's
// accuracy answer) fits, and a config storing B in fp16 is served with an
// error_budget check recording the map, the bound and the measured error
// against the harness's float64 matmul.
func TestExecHarnessPrecision(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the daemon")
	}
	bin := buildCHarness(t, "matmul_harness", "-ffp-contract=fast")
	spec := "name: matmulp\nevaluator: exec:" + bin + "\nproblems: [\"256\"]\nschedule: \"@every 1h\"\nbudget: {evals: 6}\ntimeout: 30s\n" +
		"parameters: {order: [packed], b_storage: [fp16]}\nverify: {error_budget: {rel: 1e-2}}\n"
	d := start(t, newDir(t, map[string]string{"matmulp.yaml": spec}))
	served := waitServedKernel(t, d, "matmulp", "256")
	if served.Config["b_storage"] != "fp16" {
		t.Fatalf("served %+v, want b_storage fp16", served)
	}
	ch := budgetCheck(t, d, served.Certificate)
	pm, _ := ch.Inputs["precision_map"].(map[string]any)
	bound, _ := ch.Results["bound"].(float64)
	meas, _ := ch.Results["measured_err"].(float64)
	stages, _ := ch.Results["stages"].([]any)
	// fp16 rounds B by up to 2^-11: the measured error is well above
	// fp32's (2e-6 at 256) and within the bound.
	if !ch.Passed || ch.Inputs["budget"] != 1e-2 || pm["b_storage"] != "fp16" ||
		!(bound > 0 && bound <= 1e-2) || !(meas > 1e-4 && meas <= bound) || len(stages) != 2 {
		t.Errorf("error_budget check %+v", ch)
	}
	t.Logf("served %s: bound %.3g, measured %.3g", served.Key, bound, meas)
}

// certCheck is one check of a certificate as quasimctl certs show --json
// prints it.
type certCheck struct {
	Name    string         `json:"name"`
	Passed  bool           `json:"passed"`
	Inputs  map[string]any `json:"inputs"`
	Results map[string]any `json:"results"`
}

// budgetCheck is certificate id's error_budget check; the test fails
// without one.
func budgetCheck(t *testing.T, d *proc, id string) certCheck {
	t.Helper()
	body, errs, code := d.ctl("certs", "show", id, "--json")
	if code != 0 {
		t.Fatalf("certs show --json: exit %d %s", code, errs)
	}
	var cert struct {
		Checks []certCheck `json:"checks"`
	}
	if err := json.Unmarshal([]byte(body), &cert); err != nil {
		t.Fatal(err)
	}
	for _, ch := range cert.Checks {
		if ch.Name == "error_budget" {
			return ch
		}
	}
	t.Fatalf("certificate has no error_budget check:\n%s", body)
	return certCheck{}
}

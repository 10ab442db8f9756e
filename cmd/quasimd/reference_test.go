package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
)

// refSpec is evaluate/opencl's scale kernel with block_size_x's values in
// the order given and the reference config of check.
func refSpec(name, blocks, check string) string {
	return fmt.Sprintf(`name: %s
evaluator: opencl
problem_dims: [n]
problems: ["100000"]
schedule: "@every 1h"
budget: {evals: 4}
timeout: 30s
opencl:
  source: scale.cl
  kernel: scale
  tune_params:
    block_size_x: %s
    work_per_item: [1, 2]
    FAULT: [0]
  problem_size: [n]
  grid_div_x: [block_size_x, work_per_item]
  args:
    - {name: y, type: float, size: n, output: true}
    - {name: x, type: float, size: n, fill: random, seed: 1}
    - {name: a, type: float, value: "2.5"}
    - {name: n, type: int, value: n}
  check:
    tolerance: {rel: 1e-6}
%s`, name, blocks, check)
}

// A spec whose value lists are written in descending order, the first
// value a work-group no CPU device takes, tunes and serves as the same
// spec in ascending order: both compare every config with the reference
// config check.reference names, and their certificates say so with the
// tolerance and the worst element. Without check.reference or a default,
// the reference (every first value) cannot run: the spec does not load,
// and status says so and exits 6.
func TestOpenCLReferenceConfig(t *testing.T) {
	t.Parallel()
	needOpenCL(t)
	ref := "    reference: {block_size_x: 64, work_per_item: 2}\n"
	dir := newDir(t, map[string]string{
		"asc.yaml":   refSpec("asc", "[32, 64, 128, 8192]", ref),
		"desc.yaml":  refSpec("desc", "[8192, 128, 64, 32]", ref),
		"noref.yaml": refSpec("noref", "[8192, 64]", ""),
	})
	src, err := os.ReadFile("../../evaluate/opencl/testdata/scale.cl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernels.d", "scale.cl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	d := start(t, dir, "--finalists", "0")
	for _, k := range []string{"asc", "desc"} {
		if out, errs, code := d.ctl("tune", k, "--budget", "4", "--wait"); code != 0 {
			t.Fatalf("tune %s --wait: exit %d\n%s\n%s", k, code, out, errs)
		}
		var trials api.Trials
		d.ctlJSON(&trials, "trials", k)
		for _, tr := range trials.Trials {
			if tr.Status == "wrong_result" || (tr.Status != "ok" && !strings.HasPrefix(tr.Key, "8192,")) {
				t.Errorf("%s: trial %s is %s (%s)", k, tr.Key, tr.Status, tr.Error)
			}
		}
		var cfg api.Config
		d.ctlJSON(&cfg, "config", k)
		if cfg.Match != api.MatchExact || cfg.Certificate == "" {
			t.Fatalf("%s: config %+v, want a certified config served", k, cfg)
		}
		out, _, code := d.ctl("certs", "show", cfg.Certificate, "--json")
		if code != 0 {
			t.Fatalf("certs show %s: exit %d", cfg.Certificate, code)
		}
		c, err := certs.Decode([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		var parity *certs.Check
		for i := range c.Checks {
			if c.Checks[i].Name == "parity" {
				parity = &c.Checks[i]
			}
		}
		if parity == nil || !parity.Passed || parity.Inputs["reference"] != "the output of the reference config 64,2,0" ||
			parity.Inputs["tolerance_kind"] != "rel" || parity.Results["tolerance"] != 1e-6 || !strings.Contains(fmt.Sprint(parity.Results["worst"]), "y[") {
			b, _ := json.Marshal(parity)
			t.Errorf("%s: parity check %s, want passed against 64,2,0 at rel 1e-6 with the worst element of y", k, b)
		}
	}
	out, errs, code := d.ctl("status")
	if code != 6 || !strings.Contains(out+errs, "noref") || !strings.Contains(out+errs, "did not run") {
		t.Errorf("status = %d, want 6 naming noref's reference that did not run:\n%s%s", code, out, errs)
	}
}

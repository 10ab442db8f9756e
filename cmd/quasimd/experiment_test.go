package main

import (
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

// The real quasimd runs the builtin pipeline's perturbation experiment
// and keeps it; quasimctl causal check shows it, and causal show gives
// each perturbed kernel's measured check.
func TestCausalCheck(t *testing.T) {
	d := start(t, newDir(t, map[string]string{"reduce.yaml": reduceSpec, "builtin.yaml": "pipeline: builtin\nkernels: [reduce]\n"}))
	var ex api.Experiment
	d.ctlJSON(&ex, "causal", "check", "builtin", "--runs", "2")
	if ex.ID != 1 || ex.Runs != 2 || len(ex.Results) < 10 || ex.Baseline.N != 2*len(ex.Results) {
		t.Fatalf("experiment: id %d, runs %d, %d results, baseline %+v", ex.ID, ex.Runs, len(ex.Results), ex.Baseline)
	}
	for _, r := range ex.Results {
		if r.Predicted.N != 2 || r.Measured.N != 2 || r.BaseMS <= 0 {
			t.Fatalf("result %+v", r)
		}
	}
	out, errs, code := d.ctl("causal", "check", "builtin", "--last")
	if code != 0 || !strings.Contains(out, "conv_big +1ms") || !strings.Contains(out, "mean error") || !strings.Contains(out, "reduce") {
		t.Fatalf("check --last: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code = d.ctl("causal", "show", "builtin")
	if code != 0 || strings.Count(out, "(predicted ") != 3 {
		t.Fatalf("show: exit %d, want a measured check of conv2d, reduce and sgemm\n%s\n%s", code, out, errs)
	}
	if _, errs, code := d.ctl("causal", "check", "nope"); code != 4 || !strings.Contains(errs, `"nope"`) {
		t.Fatalf("unknown pipeline: exit %d: %s", code, errs)
	}
	if _, errs, code := d.ctl("causal", "check", "builtin", "--runs", "1"); code != 2 || !strings.Contains(errs, "runs 1") {
		t.Fatalf("--runs 1: exit %d: %s", code, errs)
	}
}

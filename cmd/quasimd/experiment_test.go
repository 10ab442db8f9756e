package main

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

// The real quasimd runs the builtin pipeline's perturbation experiment
// and keeps it; quasimctl causal check shows it, and causal show gives
// each perturbed kernel's measured check.
func TestCausalCheck(t *testing.T) {
	t.Parallel()
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
	if code != 0 || strings.Count(out, "(predicted ") != 4 {
		t.Fatalf("show: exit %d, want a measured check of conv2d at each of its two problems, reduce and sgemm\n%s\n%s", code, out, errs)
	}
	if _, errs, code := d.ctl("causal", "check", "nope"); code != 4 || !strings.Contains(errs, `"nope"`) {
		t.Fatalf("unknown pipeline: exit %d: %s", code, errs)
	}
	if _, errs, code := d.ctl("causal", "check", "builtin", "--runs", "1"); code != 2 || !strings.Contains(errs, "runs 1") {
		t.Fatalf("--runs 1: exit %d: %s", code, errs)
	}
}

// The real quasimd runs the perturbation experiment of the pipeline the
// C example harness declares (two matmuls on two threads joining into a
// reduction), through the same route and command as the builtin one: the
// big matmul at its served config, every perturbation predicted and
// measured, the small matmul's delay (beside the critical path, within
// its slack) predicted to cost about nothing. QUASIM_EXEC_RUNS sets the
// runs (default 5); the table is logged.
func TestCausalCheckExec(t *testing.T) {
	t.Parallel()
	bin := buildCHarness(t, "pipeline_harness", "-pthread")
	runs := "5"
	if r := os.Getenv("QUASIM_EXEC_RUNS"); r != "" {
		runs = r
	}
	spec := "name: mm\nevaluator: exec:" + bin + "\nproblems: [\"320\"]\nschedule: \"@every 1h\"\nbudget: {evals: 4}\ntimeout: 20s\n"
	d := start(t, newDir(t, map[string]string{"mm.yaml": spec}))
	served := waitServedKernel(t, d, "mm", "320")
	var ex api.Experiment
	d.ctlJSON(&ex, "causal", "check", "twomm", "--runs", runs)
	if ex.ID != 1 || ex.Pipeline != "twomm" || len(ex.Stages) != 3 || len(ex.Results) != 6 || ex.Baseline.N != 6*ex.Runs {
		t.Fatalf("experiment: id %d, %d stages, %d results, baseline %+v", ex.ID, len(ex.Stages), len(ex.Results), ex.Baseline)
	}
	if st := ex.Stages[0]; st.Name != "mm_big" || st.Kernel != "mm" || st.Config != served.Key || !st.Served || ex.Stages[1].Served {
		t.Fatalf("stages %+v, served %q", ex.Stages, served.Key)
	}
	for _, r := range ex.Results {
		if r.Predicted.N != ex.Runs || r.Measured.N != ex.Runs || r.BaseMS <= 0 {
			t.Fatalf("result %+v", r)
		}
		// The small matmul is off the critical path by design; the model
		// must then predict its delay costs nothing. On a loaded machine a
		// descheduled thread can put it on the path in the baseline runs
		// (OnPath says how often): the model is right to predict a cost
		// then, so the check holds only where the baseline kept it off.
		if r.Perturbation.Stage == "mm_small" && r.Perturbation.DelayMS > 0 {
			switch {
			case r.OnPath == 0 && math.Abs(r.Predicted.Median) > 2:
				t.Errorf("the small matmul's delay, off the critical path in every baseline run: predicted %+.1f%%, want about 0", r.Predicted.Median)
			case r.OnPath > 0:
				t.Logf("the small matmul was on the critical path in %.0f%% of the baseline runs (a loaded machine): predicted %+.1f%%", 100*r.OnPath, r.Predicted.Median)
			}
		}
		if r.Perturbation.Config != "" && r.Scale <= 0 {
			t.Errorf("config %s: scale %v", r.Perturbation.Name, r.Scale)
		}
	}
	out, errs, code := d.ctl("causal", "check", "twomm", "--last")
	if code != 0 || !strings.Contains(out, "mm_small +") || !strings.Contains(out, "sum at") {
		t.Fatalf("check --last: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("%s", out)
	out, errs, code = d.ctl("causal", "show", "twomm")
	if code != 0 || strings.Count(out, "(predicted ") != 3 {
		t.Fatalf("show: exit %d, want a measured check of mm at each of its two problems and reduce\n%s\n%s", code, out, errs)
	}
	if _, errs, code := d.ctl("causal", "check", "twomm", "--json", "--runs", "2", "--baseline"); code != 0 {
		t.Fatalf("baseline: exit %d: %s", code, errs)
	}
}

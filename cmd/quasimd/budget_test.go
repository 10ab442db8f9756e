package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
)

// budgetDir declares two kernels of the builtin pipeline, conv2d at
// 512,512,7 (on its critical path) and sgemm at 128,128,128 (beside it),
// evals evaluations each, and the builtin pipeline over them with
// budget_by_influence as given.
func budgetDir(t testing.TB, byInfluence bool, evals int) string {
	spec := func(name, problem string) string {
		return fmt.Sprintf("name: %s\nevaluator: builtin:%s\nproblems: [%q]\nschedule: \"@every 24h\"\nbudget: {evals: %d}\n", name, name, problem, evals)
	}
	return newDir(t, map[string]string{
		"conv2d.yaml":  spec("conv2d", "512,512,7"),
		"sgemm.yaml":   spec("sgemm", "128,128,128"),
		"builtin.yaml": fmt.Sprintf("pipeline: builtin\nkernels: [conv2d, sgemm]\nbudget_by_influence: %v\n", byInfluence),
	})
}

// tuned waits until the first cycles of both kernels have ended (a kernel
// given no budget has none) and returns them by kernel.
func (d *proc) tuned(timeout time.Duration) map[string][]api.Cycle {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := map[string][]api.Cycle{}
		ended := true
		for _, k := range []string{"conv2d", "sgemm"} {
			var cs api.Cycles
			d.ctlJSON(&cs, "cycles", k)
			out[k] = cs.Cycles
			for _, c := range cs.Cycles {
				ended = ended && c.Ended != nil
			}
		}
		if ended && len(out["conv2d"]) > 0 {
			return out
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("first cycles not ended within %s: %+v", timeout, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The real daemon pools the two kernels' budgets at its start and splits
// them by influence, recording why in each cycle; the total is the sum
// of the spec budgets.
func TestBudgetByInfluence(t *testing.T) {
	d := start(t, budgetDir(t, true, 3))
	cycles := d.tuned(2 * time.Minute)
	total := 0
	for k, cs := range cycles {
		for _, c := range cs {
			total += c.Budget
			if !strings.Contains(c.Budgeted, "pipeline builtin by influence") || c.Trigger != "start" {
				t.Errorf("%s cycle %d: trigger %q, budgeted %q", k, c.ID, c.Trigger, c.Budgeted)
			}
		}
	}
	if total != 6 {
		t.Errorf("budgets sum to %d, want the 6 of both specs: %+v", total, cycles)
	}
	// The daemon recorded the pipeline to know the influences: its spans
	// are stored and profiled.
	status, body := d.rawGet("/v1/causal/builtin")
	var prof api.Causal
	if err := json.Unmarshal(body, &prof); status != 200 || err != nil || prof.Iterations < 10 {
		t.Errorf("profile: %d %s, want the 10 recorded iterations", status, body)
	}
}

// BenchmarkBudgetByInfluence is the acceptance measurement of budget by
// influence: two real daemons tune conv2d (on the builtin pipeline's
// critical path) and sgemm (beside it) with the same total budget, one
// split by influence and one evenly (budget_by_influence: false, each its
// equal spec budget), then each measures the pipeline's end-to-end time at
// its served configs (quasimctl causal check builtin --baseline):
//
//	QUASIM_BUDGET_EVALS=8 go test ./cmd/quasimd -run '^$' -bench BudgetByInfluence -benchtime 1x -v
func BenchmarkBudgetByInfluence(b *testing.B) {
	evals := 8
	if v, err := strconv.Atoi(os.Getenv("QUASIM_BUDGET_EVALS")); err == nil && v > 0 {
		evals = v
	}
	for b.Loop() {
		for _, byInfluence := range []bool{true, false} {
			d := start(b, budgetDir(b, byInfluence, evals))
			cycles := d.tuned(10 * time.Minute)
			var ex api.Experiment
			d.ctlJSON(&ex, "causal", "check", "builtin", "--baseline", "--runs", "200")
			arm := "even"
			if byInfluence {
				arm = "influence"
			}
			for _, k := range []string{"conv2d", "sgemm"} {
				for _, c := range cycles[k] {
					b.Logf("%s: %s cycle %d: %d evals, best %.3f ms %s", arm, k, c.ID, c.Evals, c.BestMS, c.BestKey)
				}
			}
			for _, st := range ex.Stages {
				b.Logf("%s: stage %s at %s served=%v", arm, st.Name, st.Config, st.Served)
			}
			e := ex.Baseline
			b.Logf("%s (total %d evals): end to end %.3f ms [95%% CI %.3f, %.3f] over %d iterations", arm, 2*evals, e.Median, e.Lo, e.Hi, e.N)
			b.ReportMetric(e.Median, arm+"-e2e-ms")
			d.stop()
		}
	}
}

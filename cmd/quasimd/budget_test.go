package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
)

// budgetDir declares two kernels of the builtin pipeline, conv2d at
// 512,512,7 (on its critical path) and sgemm at 128,128,128 (beside it),
// evals evaluations each, and the builtin pipeline over them with
// budget_by_influence as given. Both are tuned with one worker: the
// pipeline runs two streams on this 2-core machine, so a config tuned
// alone with two workers fights the other stream for a core.
func budgetDir(t testing.TB, byInfluence bool, evals int) string {
	spec := func(name, problem string) string {
		return fmt.Sprintf("name: %s\nevaluator: builtin:%s\nproblems: [%q]\nparameters: {workers: [1]}\nschedule: \"@every 24h\"\nbudget: {evals: %d}\n", name, name, problem, evals)
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
	t.Parallel()
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
// equal spec budget), one after the other. Then each measures the
// pipeline's end-to-end time at its served configs (quasimctl causal
// check builtin --baseline), in alternating rounds so the machine's drift
// falls on both:
//
//	QUASIM_BUDGET_EVALS=8 go test ./cmd/quasimd -run '^$' -bench BudgetByInfluence -benchtime 1x -v
func BenchmarkBudgetByInfluence(b *testing.B) {
	evals := 8
	if v, err := strconv.Atoi(os.Getenv("QUASIM_BUDGET_EVALS")); err == nil && v > 0 {
		evals = v
	}
	const rounds, runs = 15, 30
	for b.Loop() {
		arms := []string{"influence", "even"}
		daemons := map[string]*proc{}
		for _, arm := range arms {
			d := start(b, budgetDir(b, arm == "influence", evals))
			cycles := d.tuned(10 * time.Minute)
			for _, k := range []string{"conv2d", "sgemm"} {
				for _, c := range cycles[k] {
					b.Logf("%s: %s cycle %d: %d evals, best alone %.3f ms at %s", arm, k, c.ID, c.Evals, c.BestMS, c.BestKey)
				}
			}
			daemons[arm] = d
		}
		medians := map[string][]float64{}
		var diffs []float64 // even - influence, per round
		for r := range rounds {
			got := map[string]float64{}
			for k := range arms {
				arm := arms[(k+r)%2] // alternate which goes first
				var ex api.Experiment
				daemons[arm].ctlJSON(&ex, "causal", "check", "builtin", "--baseline", "--runs", strconv.Itoa(runs))
				got[arm] = ex.Baseline.Median
				medians[arm] = append(medians[arm], ex.Baseline.Median)
				if r == 0 {
					for _, st := range ex.Stages {
						b.Logf("%s: stage %s at %s (served %v)", arm, st.Name, st.Config, st.Served)
					}
				}
			}
			diffs = append(diffs, got["even"]-got["influence"])
		}
		faster := 0
		for _, d := range diffs {
			if d > 0 {
				faster++
			}
		}
		for _, arm := range arms {
			m := medianOf(medians[arm])
			b.Logf("%s (total %d evals): end to end %.3f ms, median of %d rounds of %d iterations (rounds %.3f to %.3f)",
				arm, 2*evals, m, rounds, runs, slices.Min(medians[arm]), slices.Max(medians[arm]))
			b.ReportMetric(m, arm+"-e2e-ms")
		}
		b.Logf("even - influence per round: median %.3f ms (%.3f to %.3f); influence faster in %d of %d rounds",
			medianOf(diffs), slices.Min(diffs), slices.Max(diffs), faster, rounds)
		b.ReportMetric(medianOf(diffs), "even-minus-influence-ms")
		for _, d := range daemons {
			d.stop()
		}
	}
}

func medianOf(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	return (s[(n-1)/2] + s[n/2]) / 2
}

package report

import (
	"fmt"
	"math"
	"time"

	"github.com/quasim/quasim/api"
)

var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// fixture is a kernel record with one job of each kind the report must
// draw: tuned over three cycles with energy and certificates (one
// revoked), no trials, only failed trials, a single trial, and an
// imported foreign job without energy.
func fixture() Input {
	params := []string{"bx", "by", "kind"}
	var trials []api.Trial
	var cycles []api.Cycle
	at := t0
	n := 0
	for cy := 1; cy <= 3; cy++ {
		cycles = append(cycles, api.Cycle{ID: cy, Job: "sgemm/256/cpu", Kernel: "sgemm", Problem: "256", Device: "cpu/x",
			Trigger: "cron", State: "done", Started: at, Budget: 12, Evals: 12, Strategy: "portfolio",
			Allocation: map[string]int{"es": 3 + cy, "quantumsearch": 5 - cy, "design": 4}})
		for i := 0; i < 12; i++ {
			bx, by := []int{8, 16, 32, 64}[n%4], []int{1, 2, 4}[(n/4)%3]
			kind := []string{"naive", "tiled"}[(n/12)%2]
			key := fmt.Sprintf("%d,%d,%s", bx, by, kind)
			n++
			at = at.Add(time.Second)
			t := api.Trial{Key: key, Status: "ok", At: at, Problem: "256", Device: "cpu/x", Cycle: cy, CostS: 0.1}
			if n%9 == 0 {
				t.Status, t.Error = "compile", "bad <unroll>"
			} else {
				t.TimeMS = 10 / float64(bx) * float64(by) * (1 + 0.1*float64(n%5))
				if kind == "tiled" {
					t.TimeMS *= 0.7
				}
				// Faster configs draw more power: a front, not a line.
				t.EnergyMJ = t.TimeMS*20 + 3/t.TimeMS + 5*math.Mod(float64(n*7), 11)
			}
			trials = append(trials, t)
		}
	}
	best := trials[0]
	for _, t := range trials {
		if valid(t) && (!valid(best) || t.TimeMS < best.TimeMS) {
			best = t
		}
	}
	// Failed-only, single, and an imported foreign job.
	trials = append(trials,
		api.Trial{Key: "8,1,naive", Status: "runtime", Error: "segfault", At: t0, Problem: "512", Device: "cpu/x", Cycle: 1},
		api.Trial{Key: "8,2,naive", Status: "timeout", At: t0, Problem: "512", Device: "cpu/x", Cycle: 1},
		api.Trial{Key: "16,1,tiled", Status: "ok", TimeMS: 5, At: t0, Problem: "1024", Device: "cpu/x", Cycle: 1},
	)
	for i := 0; i < 30; i++ {
		trials = append(trials, api.Trial{Key: fmt.Sprintf("%d,%d,naive", 8<<(i%4), 1+i%3), Status: "ok", TimeMS: 1 + float64(i%7), At: t0, Problem: "256", Device: "nvidia/GPU"})
	}
	next := t0.Add(6 * time.Hour)
	return Input{
		Title:     "fixture <report>",
		Source:    "test",
		Generated: t0,
		Device:    "cpu/x",
		Pipelines: []api.Pipeline{{Name: "fork-join"}, {Name: "idle"}},
		Causal: []api.Causal{{Pipeline: "fork-join", Iterations: 20, Spans: 80, CurveStep: 0.05,
			EndToEnd: api.Estimate{Median: 9e6, Lo: 8.8e6, Hi: 9.3e6},
			Kernels: []api.CausalKernel{
				{Kernel: "conv2d", Share: api.Estimate{Median: 0.6, Lo: 0.58, Hi: 0.63}, Critical: api.Estimate{Median: 0.6, Lo: 0.58, Hi: 0.63},
					Influence: api.Estimate{Median: 0.6, Lo: 0.55, Hi: 0.62},
					Curve:     []api.Estimate{{}, {Median: 0.03}, {Median: 0.06}},
					Gain:      &api.Estimate{Median: 0.2, Lo: 0.18, Hi: 0.22},
					Measured:  &api.MeasuredCheck{Experiment: "conv2d at its tuned config", Predicted: 0.2, Measured: api.Estimate{Median: 0.19, Lo: 0.17, Hi: 0.21}, Runs: 10}},
				{Kernel: "sgemm", Share: api.Estimate{Median: 0.3}, Critical: api.Estimate{}, Influence: api.Estimate{},
					Curve: []api.Estimate{{}, {}, {}}, TunedNote: "job sgemm has no ok trial yet"},
			}}},
		CausalErrors: map[string]string{"idle": "synthetic: no spans"},
		MemPlans: []MemPlan{{File: "g.json", Where: "planned offline", Plan: api.MemPlan{Name: "synthetic graph", Ops: 3, Tensors: 4,
			LowerBound: 1000, Peak: 1000, BySize: 1100, ByBreadth: 1200, Strategy: "search",
			Schedule: []byte(`{"makespan_ns":1200,"no_overlap_ns":2000,"compute_only_ns":1000}`),
			Misses:   []byte(`{"levels":[{"name":"L1","refs":500,"misses":40}]}`)}}},
		Ceilings: &api.Ceilings{GFLOPS: 500, GFLOPSThread: 250, BandwidthGBs: 50, Threads: 2, FMA: "avx512 fma", How: "synthetic fixture", MeasuredAt: t0,
			Levels: []api.CacheCeiling{{Name: "L1", Bytes: 32 << 10, BufferBytes: 8 << 10, BandwidthGBs: 400}, {Name: "L2", Bytes: 1 << 20, BufferBytes: 256 << 10, BandwidthGBs: 200}, {Name: "L3", Bytes: 32 << 20, BufferBytes: 4 << 20, BandwidthGBs: 100}}},
		Kernels: []Kernel{{
			Info: api.Kernel{Name: "sgemm", Params: params, Schedule: "0 */6 * * *", Jobs: []api.Job{
				{ID: "sgemm/256/cpu", Problem: "256", Device: "cpu/x", Trials: 36,
					Served: &api.Config{Key: best.Key, TimeMS: best.TimeMS * 1.02, DefaultMS: 2.5},
					Work:   &api.Work{Flops: 2 * 256 * 256 * 256, Bytes: 4 * 3 * 256 * 256}},
				{ID: "sgemm/128/cpu", Problem: "128", Device: "cpu/x", NextCycle: &next},
				{ID: "sgemm/512/cpu", Problem: "512", Device: "cpu/x"},
				{ID: "sgemm/1024/cpu", Problem: "1024", Device: "cpu/x", Work: &api.Work{Flops: 2 << 30, Bytes: 12 << 20}},
				{ID: "sgemm/256/gpu", Problem: "256", Device: "nvidia/GPU", Foreign: true},
			}},
			Params: params,
			Trials: trials,
			Cycles: cycles,
			Certs: []Cert{
				{CertSummary: api.CertSummary{ID: "aaaa1111bbbb2222cccc", Kernel: "sgemm", Problem: "256", Device: "cpu/x", Key: best.Key, TimeMS: best.TimeMS * 1.02, IssuedAt: at, Served: true},
					Checks: []Check{
						{Name: "parity", Passed: true, Inputs: map[string]any{"rtol": 1e-4}, Results: map[string]any{"max_rel_err": 2.5e-6}},
						{Name: "error_bound", NotChecked: "the evaluator gives no bound"},
					},
					Latency: &Latency{Samples: 30, MedianMS: best.TimeMS * 1.02, CILowMS: best.TimeMS, CIHighMS: best.TimeMS * 1.05}},
				{CertSummary: api.CertSummary{ID: "dddd", Kernel: "sgemm", Problem: "256", Device: "cpu/x", Key: trials[1].Key, TimeMS: 1, IssuedAt: t0, Revoked: true, RevokedAt: &at, Reason: "drift"}},
			},
		}},
	}
}

// crowdedFixture is fixture with a second kernel whose long-named jobs
// all have known work, so that the roofline's legend holds more entries
// than one row of the chart can.
func crowdedFixture() Input {
	in := fixture()
	k := Kernel{Info: api.Kernel{Name: "stencil_2d_blocked_with_a_long_name", Params: []string{"tile", "unroll"}}, Params: []string{"tile", "unroll"}}
	for i := range 8 {
		n := 64 << i
		problem := fmt.Sprintf("%d,%d", n, n)
		id := "stencil/" + problem + "/cpu"
		k.Info.Jobs = append(k.Info.Jobs, api.Job{ID: id, Problem: problem, Device: "cpu/x",
			Work: &api.Work{Flops: 5 * float64(n*n), Bytes: 8 * float64(n*n)}})
		for j, tile := range []int{8, 16, 32} {
			for u := 1; u <= 2; u++ {
				k.Trials = append(k.Trials, api.Trial{Key: fmt.Sprintf("%d,%d", tile, u), Status: "ok", Problem: problem, Device: "cpu/x", Cycle: 1, At: t0,
					TimeMS: float64(n*n) * 1e-7 * (1 + 0.3*float64(j)) / float64(u)})
			}
		}
	}
	// The first job is served a config whose certificate measured it 3.34×
	// slower (a busy machine at verification): the page must flag it.
	served := k.Trials[1]
	k.Info.Jobs[0].Served = &api.Config{Key: served.Key, TimeMS: served.TimeMS, Certificate: "eeee5555"}
	k.Certs = []Cert{{CertSummary: api.CertSummary{ID: "eeee5555", Kernel: k.Info.Name, Problem: served.Problem, Device: "cpu/x", Key: served.Key, TimeMS: served.TimeMS * 3.34, IssuedAt: t0, Served: true},
		Latency: &Latency{Samples: 30, MedianMS: served.TimeMS * 3.34, CILowMS: served.TimeMS * 3.3, CIHighMS: served.TimeMS * 3.4}}}
	// A job the pipeline's split by influence gave nothing: listed last,
	// with the daemon's reason.
	k.Info.Jobs = append(k.Info.Jobs, api.Job{ID: "stencil/16384,16384/cpu", Problem: "16384,16384", Device: "cpu/x",
		Held: "budget by influence gave it no evaluations this time (pipeline p by influence: rank 3 of 3, expected gain 0.000 = influence 0.000 x headroom 0.50, 0 of 60 evaluations); its schedule tunes it later"})
	in.Kernels = append(in.Kernels, k)
	return in
}

package pipeline

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// BenchmarkExperiment runs the builtin pipeline's experiment once and logs
// its results (quasimctl causal check builtin asks quasimd for the same
// and prints a table); QUASIM_RUNS sets the pairs per perturbation:
//
//	QUASIM_RUNS=10 go test ./internal/pipeline -run '^$' -bench Experiment -benchtime 1x -v
func BenchmarkExperiment(b *testing.B) {
	runs, _ := strconv.Atoi(os.Getenv("QUASIM_RUNS"))
	for b.Loop() {
		r, err := New(Config{Pipeline: Builtin(), Clock: Since(time.Now())})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := Experiment(context.Background(), r, BuiltinPerturbations(), ExperimentOptions{Runs: runs, RNG: rand.New(rand.NewPCG(1, 1))}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rep.Results {
			b.Logf("%-34s predicted %+6.1f%% [%+6.1f, %+6.1f]  measured %+6.1f%% [%+6.1f, %+6.1f]  error %.1f",
				r.Perturbation, r.Predicted.Median, r.Predicted.Lo, r.Predicted.Hi, r.Measured.Median, r.Measured.Lo, r.Measured.Hi, r.Error)
		}
		b.ReportMetric(rep.MeanError, "mean-err-pts")
		b.ReportMetric(rep.WorstError, "worst-err-pts")
	}
}

// BenchmarkVirtualSpeedup runs BuiltinSpeedups once: each stage delayed by
// 1 ms and virtually sped up by a fifth, with the changes in ms beside
// what they stand for (the delay; the pauses, f·t). QUASIM_RUNS sets the
// pairs per perturbation:
//
//	QUASIM_RUNS=30 go test ./internal/pipeline -run '^$' -bench VirtualSpeedup -benchtime 1x -v
func BenchmarkVirtualSpeedup(b *testing.B) {
	runs, _ := strconv.Atoi(os.Getenv("QUASIM_RUNS"))
	for b.Loop() {
		r, err := New(Config{Pipeline: Builtin(), Clock: Since(time.Now())})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := Experiment(context.Background(), r, BuiltinSpeedups(), ExperimentOptions{Runs: runs, RNG: rand.New(rand.NewPCG(1, 1))}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("baseline %.2f ms [%.2f, %.2f]", rep.Baseline.Median, rep.Baseline.Lo, rep.Baseline.Hi)
		for _, r := range rep.Results {
			asked := float64(r.Perturbation.Delay)/1e6 + r.OvershootMS // the delay as inserted
			if r.Perturbation.Speedup > 0 {
				asked = -r.PausedMS // the gain on the critical path
			}
			b.Logf("%-34s on path %.2f  predicted %+6.1f%% [%+6.1f, %+6.1f]  measured %+6.1f%% [%+6.1f, %+6.1f]  error %4.1f  measured %+6.2f ms of %+6.2f ms",
				r.Perturbation, r.OnPath, r.Predicted.Median, r.Predicted.Lo, r.Predicted.Hi, r.Measured.Median, r.Measured.Lo, r.Measured.Hi, r.Error,
				r.Measured.Median*r.BaseMS/100, asked)
		}
		b.ReportMetric(rep.MeanError, "mean-err-pts")
		b.ReportMetric(rep.WorstError, "worst-err-pts")
	}
}

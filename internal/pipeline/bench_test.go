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

package pipeline

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// BenchmarkExperiment runs the builtin pipeline's experiment once and
// prints its table (quasimd causal experiment does the same and stores it):
//
//	go test ./internal/pipeline -run '^$' -bench Experiment -benchtime 1x
func BenchmarkExperiment(b *testing.B) {
	for b.Loop() {
		r, err := New(Config{Pipeline: Builtin(), Clock: Since(time.Now())})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := Experiment(context.Background(), r, BuiltinPerturbations(), ExperimentOptions{RNG: rand.New(rand.NewPCG(1, 1))}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		rep.WriteTable(os.Stdout)
		b.ReportMetric(rep.MeanError, "mean-err-pts")
		b.ReportMetric(rep.WorstError, "worst-err-pts")
	}
}

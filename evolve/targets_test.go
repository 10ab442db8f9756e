package evolve

import (
	"math"
	"testing"

	"github.com/quasim/quasim/genome"
)

func TestFitTargetsRank(t *testing.T) {
	res := func(v float64, ok bool) Result { return Result{Config: genome.Config{0}, Value: v, OK: ok} }
	// A heavy tail: the slowest valid config is 1000 times the fastest.
	told := []Result{res(1, true), res(1000, true), res(2, true), res(2, true), res(0, false), res(3, true)}
	y := FitTargets(told, TargetsRank)
	// Normal scores of ranks 0, 4, 1.5, 1.5, 3 of five valid results.
	z := func(r float64) float64 { return math.Sqrt2 * math.Erfinv(2*(r+0.5)/5-1) }
	want := []float64{z(0), z(4), z(1.5), z(1.5), z(4) + 1, z(3)}
	for i := range want {
		if math.Abs(y[i]-want[i]) > 1e-12 {
			t.Fatalf("rank targets = %v, want %v", y, want)
		}
	}
	// Only the order counts: the tail's size does not move a target.
	told[1].Value = 4
	if y2 := FitTargets(told, TargetsRank); y2[1] != y[1] || y2[0] != y[0] {
		t.Errorf("targets moved with the tail's size: %v, then %v", y, y2)
	}
	// The default is the log.
	if y := FitTargets(told, ""); math.Abs(y[2]-math.Log(2)) > 1e-12 || y[4] != math.Log(4)+1 {
		t.Errorf("default targets = %v, want the log values, a failure at the worst plus one", y)
	}
	if y := FitTargets([]Result{res(0, false)}, TargetsRank); y[0] != 1 {
		t.Errorf("no valid result: failure at %v, want 1", y[0])
	}
	if err := CheckTargets("ranks"); err == nil {
		t.Error("CheckTargets accepted ranks")
	}
}

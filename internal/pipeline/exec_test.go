package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/evaluate/harness"
)

// fakeHarness builds evaluate/harness's test harness, which makes up its
// pipeline's times without running anything (a 2 ms, b 0.4 ms beside it,
// c 0.5 ms after both): the model is exact on them.
func fakeHarness(t *testing.T, form string) *harness.Harness {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakeharness")
	if out, err := exec.Command("go", "build", "-o", bin, "../../evaluate/harness/testdata/fakeharness").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	h, err := harness.Start(harness.Options{Command: []string{bin}, Env: []string{"FAKE_PIPELINE=" + form, "FAKE_MODES=ok"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// An experiment on an exec pipeline predicts exactly what the harness
// reports, whether it reports spans or stage times: a delay on the
// critical path costs itself, one beside it with slack nothing, and a
// config twice as slow twice the stage's time.
func TestExecExperiment(t *testing.T) {
	for _, form := range []string{"spans", "times"} {
		t.Run(form, func(t *testing.T) {
			e, err := NewExec(fakeHarness(t, form))
			if err != nil {
				t.Fatal(err)
			}
			pl := e.Pipeline()
			if pl.Name != "fakepipe" || len(pl.Stages) != 3 || pl.Stages[1].Kernel != "side" || pl.Stages[0].Kernel != "fake" ||
				pl.Stages[0].Config != "ok,2" || pl.Stages[1].Config != "1" || pl.Stages[2].Problem != "32" {
				t.Fatalf("pipeline %+v", pl)
			}
			perts := ExecPerturbations(e, 2500*time.Microsecond)
			var names []string
			for _, p := range perts {
				names = append(names, p.Name)
			}
			if got := strings.Join(names, " "); got != "a+0.5ms b+0.5ms c+0.5ms a@ok,4 b@3 c@ok,4" {
				t.Fatalf("perturbations %s", got)
			}
			rep, err := Experiment(context.Background(), e, perts, ExperimentOptions{Runs: 2, Warmup: 1, Alone: 2, RNG: rand.New(rand.NewPCG(1, 1))}, time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]float64{"a+0.5ms": 20, "b+0.5ms": 0, "c+0.5ms": 20, "a@ok,4": 80, "b@3": 0, "c@ok,4": 0}
			for _, r := range rep.Results {
				w := want[r.Perturbation.Name]
				if math.Abs(r.Predicted.Median-w) > 1e-9 || math.Abs(r.Measured.Median-w) > 1e-9 || r.Error > 1e-9 {
					t.Errorf("%s: predicted %v, measured %v, want %v", r.Perturbation.Name, r.Predicted.Median, r.Measured.Median, w)
				}
			}
			if rep.Baseline.Median != 2.5 || rep.Baseline.N != 12 || len(rep.Spans) != 36 {
				t.Fatalf("baseline %+v, %d spans", rep.Baseline, len(rep.Spans))
			}
			if err := causal.Validate(rep.Spans); err != nil {
				t.Fatal(err)
			}
			if r := rep.Results[4]; r.Scale != 3 { // w 1 -> 3
				t.Fatalf("b's scale %v", r.Scale)
			}
		})
	}
}

// Perturbations an exec pipeline cannot run are refused naming them.
func TestExecCheck(t *testing.T) {
	e, err := NewExec(fakeHarness(t, "spans"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    Perturbation
		want string
	}{
		{Perturbation{Name: "x", Stage: "z", Delay: 1}, `stage "z" is not in pipeline "fakepipe"`},
		{Perturbation{Name: "x", Stage: "b", Config: "9"}, `stage "b"`},
		{Perturbation{Name: "x", Stage: "a", Config: "ok,5"}, `stage "a"`},
		{Perturbation{Name: "x", Stage: "a"}, "one of them"},
		{Perturbation{Name: "x", Stage: "a", Speedup: 0.2}, "an exec harness delays only the stage asked for"},
	} {
		if err := e.Check([]Perturbation{c.p}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
	if err := e.SetConfig("a", "ok,3"); err != nil || e.Pipeline().Stages[0].Config != "ok,3" {
		t.Fatalf("set config: %v", err)
	}
	if err := e.SetConfig("b", "7"); err == nil {
		t.Fatal("bad config set")
	}
}

package daemon

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/internal/priors"
)

// A job warm-starts only from prior sources ranked by its own objective:
// the daemon passes the job's objective to the packs, so an energy job
// beside a pack recorded for time gets nothing from it, while a time job
// of the same kernel does. Both jobs come from spec files as quasimd loads
// them, the pack from a file as --priors reads it.
func TestPriorsFollowTheJobsObjective(t *testing.T) {
	dir := t.TempDir()
	specs := map[string]string{
		"time.yaml":   "name: reduce\nevaluator: builtin:reduce\nproblems: [\"65536\"]\nschedule: \"@every 1h\"\n",
		"energy.yaml": "name: reduce_e\nevaluator: builtin:reduce\nobjective: energy\nproblems: [\"65536\"]\nschedule: \"@every 1h\"\n",
	}
	for name, body := range specs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts := newTestServer(t, dir)
	job := func(name string) (*job, *kernel) {
		k, ok := ts.sched.kernel(name)
		if !ok || len(k.jobs) == 0 {
			t.Fatalf("kernel %s not loaded", name)
		}
		return k.jobs[0], k
	}
	tj, tk := job("reduce")
	ej, ek := job("reduce_e")
	timeJob := tunerJob(tk.spec, tj.key, tj.spec)
	energyJob := tunerJob(ek.spec, ej.key, ej.spec)
	if energyJob.Objective.String() != "energy" {
		t.Fatalf("energy job's objective %q", energyJob.Objective.String())
	}
	// A time pack of kernel reduce, and of reduce_e, in the jobs' space.
	pack := &priors.Pack{Format: priors.Format, Version: priors.Version}
	for _, kernel := range []string{"reduce", "reduce_e"} {
		var results []evolve.Result
		for i, c := range tj.spec.Space.All()[:8] {
			results = append(results, evolve.Result{Config: c, Value: float64(8 - i), OK: true})
		}
		src, err := priors.NewSource(priors.Input{Name: kernel + "-time", Kernel: kernel, Space: tj.spec.Space, Results: results})
		if err != nil {
			t.Fatal(err)
		}
		pack.Sources = append(pack.Sources, src)
	}
	path := filepath.Join(t.TempDir(), "time.qprior")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := priors.Encode(f, pack); err != nil {
		t.Fatal(err)
	}
	f.Close()
	pp, err := loadPriors(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := pp.sources(timeJob); len(got) != 1 {
		t.Errorf("time job: %d sources from the time pack, want 1", len(got))
	}
	if got := pp.sources(energyJob); len(got) != 0 {
		t.Errorf("energy job: %d sources from a pack ranked by time, want none (%s)", len(got), got[0].Name)
	}
}

package tuner

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

func reduceJob(t *testing.T) Job {
	t.Helper()
	k, err := builtin.New("reduce", builtin.Options{Reps: evaluate.Reps{Max: 3}})
	if err != nil {
		t.Fatal(err)
	}
	p := evaluate.Problem{Dims: []int{65536}}
	sp, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	// FP32 or better, as a spec without an error budget keeps it.
	if sp, err = sp.Restrict([]string{`input in ["fp32"]`, `acc in ["float64", "kahan", "float32"]`}, nil); err != nil {
		t.Fatal(err)
	}
	return Job{
		Key:     store.JobKey{Kernel: "reduce", SpecHash: "h", Problem: p.String(), Device: k.Device()},
		Problem: p, Evaluator: k, Space: sp, Default: sp.Default(),
	}
}

func newTuner(st *store.Store) *Tuner {
	_, key, _ := ed25519.GenerateKey(nil)
	return New(Config{Store: st, Signer: key, NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy {
		return evolve.NewES(s, seed, evolve.ESOptions{})
	}})
}

func TestCyclePromotesBest(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	var seen []int
	cy, err := newTuner(st).Cycle(context.Background(), job, Budget{Evals: 10}, "api", 1, func(c store.Cycle) { seen = append(seen, c.Evals) })
	if err != nil {
		t.Fatal(err)
	}
	if cy.State != "done" || cy.Evals != 10 || cy.Trigger != "api" {
		t.Fatalf("cycle = %+v", cy)
	}
	if !slices.Equal(seen, []int{1, 5, 9, 10}) {
		t.Errorf("progress after each generation = %v, want [1 5 9 10]: the default alone, then generations of 4", seen)
	}
	trials, _ := st.Trials(job.Key)
	if len(trials) != 10 || trials[0].Key != job.Space.Key(job.Default) {
		t.Fatalf("%d trials, first %q; want 10 with the default first", len(trials), trials[0].Key)
	}
	best := trials[0]
	for _, tr := range trials {
		if tr.Status == "ok" && tr.TimeMS < best.TimeMS {
			best = tr
		}
	}
	sv, ok, _ := st.Served(job.Key)
	if !ok || sv.Key != best.Key || cy.Promoted != best.Key || cy.BestKey != best.Key {
		t.Errorf("served %+v, cycle best %s promoted %s; want %s", sv, cy.BestKey, cy.Promoted, best.Key)
	}
	// The next cycle continues the search: no config is measured twice.
	cy2, err := newTuner(st).Cycle(context.Background(), job, Budget{Evals: 10}, "cron", 1, nil)
	if err != nil || cy2.ID != 2 || cy2.Evals != 10 {
		t.Fatalf("second cycle = %+v, %v", cy2, err)
	}
	checkTrialsOnce(t, st, job, 20)
}

func TestCancelledCycleResumes(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	ctx, cancel := context.WithCancel(context.Background())
	tn := newTuner(st)
	cy, err := tn.Cycle(ctx, job, Budget{Evals: 12}, "start", 1, func(c store.Cycle) {
		if c.Evals >= 4 {
			cancel()
		}
	})
	if err == nil || cy.State != Unfinished {
		t.Fatalf("cancelled cycle = %+v, %v", cy, err)
	}
	n, _ := st.TrialCount(job.Key)
	if n != cy.Evals || n < 4 {
		t.Fatalf("%d trials stored, cycle says %d", n, cy.Evals)
	}
	// A later cycle resumes the interrupted one with its own budget.
	cy2, err := tn.Cycle(context.Background(), job, Budget{Evals: 99}, "cron", 1, nil)
	if err != nil || cy2.ID != cy.ID || cy2.Evals != 12 || cy2.Budget != 12 || cy2.State != "done" {
		t.Fatalf("resumed cycle = %+v, %v", cy2, err)
	}
	if n, _ := st.TrialCount(job.Key); n != 12 {
		t.Errorf("%d trials, want 12", n)
	}
}

func TestBudgetRequired(t *testing.T) {
	st := storetest.New(t)
	if _, err := newTuner(st).Cycle(context.Background(), reduceJob(t), Budget{}, "api", 1, nil); err == nil {
		t.Errorf("Cycle with no budget = nil error")
	}
}

// cancelAt cancels a cycle from inside its Nth measurement, mid-generation.
type cancelAt struct {
	evaluate.Evaluator
	n, calls int
	cancel   context.CancelFunc
}

func (c *cancelAt) Evaluate(ctx context.Context, cfg genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	c.calls++
	if c.calls == c.n {
		c.cancel()
		return evaluate.Trial{}, ctx.Err()
	}
	return c.Evaluator.Evaluate(ctx, cfg, p)
}

// A generation cut short must not lose the configs it had not measured yet:
// running on to the end of the space measures every valid config once.
func TestInterruptedGenerationLosesNothing(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	ctx, cancel := context.WithCancel(context.Background())
	inner := job.Evaluator
	job.Evaluator = &cancelAt{Evaluator: inner, n: 7, cancel: cancel}
	tn := newTuner(st)
	if _, err := tn.Cycle(ctx, job, Budget{Evals: 40}, "api", 1, nil); err == nil {
		t.Fatal("cycle cancelled mid-generation returned nil error")
	}
	job.Evaluator = inner
	size := len(job.Space.All())
	cy, err := tn.Cycle(context.Background(), job, Budget{Evals: 40}, "api", 1, nil)
	if err != nil || cy.Evals != 40 {
		t.Fatalf("resumed = %+v, %v", cy, err)
	}
	if _, err := tn.Cycle(context.Background(), job, Budget{Evals: 10 * size}, "api", 1, nil); err != nil {
		t.Fatal(err)
	}
	trials, _ := st.Trials(job.Key)
	if len(trials) != size {
		t.Errorf("%d configs measured after exhausting a space of %d", len(trials), size)
	}
}

// A store that takes no writes (opened read-only, as a full disk refuses
// the writes that need space) fails a cycle at once: the returned cycle is
// failed and ended, with ErrStore, whether it was new (ID 0: never stored)
// or an interrupted one it meant to resume.
func TestCycleFailsWhenStoreRefusesWrites(t *testing.T) {
	job := reduceJob(t)
	path := filepath.Join(t.TempDir(), "quasim.db")
	rw, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rw.Close() // created and migrated
	check := func(name string, wantID int) {
		t.Helper()
		ro, err := store.Open(path, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		cy, err := newTuner(ro).Cycle(context.Background(), job, Budget{Evals: 4}, "api", 1, nil)
		if !errors.Is(err, ErrStore) || !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("%s: error %v, want ErrStore and the store's", name, err)
		}
		if cy.ID != wantID || cy.State != "failed" || cy.Ended.IsZero() || cy.Trigger == "" || !strings.Contains(cy.Error, "state file not written") {
			t.Errorf("%s: cycle = %+v, want cycle %d failed and ended, saying why", name, cy, wantID)
		}
	}
	check("new cycle", 0)
	rw, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old, err := rw.NewCycle(job.Key, store.Cycle{Trigger: "cron", State: Unfinished, Budget: 4})
	rw.Close()
	if err != nil {
		t.Fatal(err)
	}
	check("resumed cycle", old.ID)
}

// fsizeChild names the environment variable that makes
// TestCycleFailsWhenFileCannotGrow run its body in a child process.
const fsizeChild = "QUASIM_TUNER_FSIZE_CHILD"

// A state file that cannot grow (here RLIMIT_FSIZE at its current size,
// which any user may set, standing in for a full disk) fails the cycle at
// the first checkpoint that needs more room: the cycle comes back failed
// with ErrStore and the write error, its record on disk is failed too (it
// fits in the file), and once the file may grow again the next cycle runs.
// The limit is per process, so the body runs in a child.
func TestCycleFailsWhenFileCannotGrow(t *testing.T) {
	if os.Getenv(fsizeChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCycleFailsWhenFileCannotGrow$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), fsizeChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestCycleFailsWhenFileCannotGrow") {
			t.Fatalf("child did not run the test:\n%s", out)
		}
		t.Logf("child:\n%s", out)
		return
	}
	path := filepath.Join(t.TempDir(), "quasim.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	job := reduceJob(t)
	tn := newTuner(st)
	if _, err := tn.Cycle(context.Background(), job, Budget{Evals: 4}, "start", 1, nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: uint64(fi.Size()), Max: old.Max}); err != nil {
		t.Skipf("cannot limit the file size: %v", err)
	}
	// Every config of the space: far more trials than the file has room for.
	cy, err := tn.Cycle(context.Background(), job, Budget{Evals: 1000}, "api", 1, nil)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, ErrStore) || cy.State != "failed" || cy.Ended.IsZero() || cy.ID != 2 || !strings.Contains(cy.Error, "state file not written") {
		t.Fatalf("cycle on a file that cannot grow = %+v, %v; want cycle 2 failed with ErrStore", cy, err)
	}
	t.Logf("failed after %d evaluations: %s", cy.Evals, cy.Error)
	cycles, err := st.Cycles(job.Key)
	if err != nil || len(cycles) != 2 || cycles[1].State != "failed" || cycles[1].Error != cy.Error {
		t.Fatalf("stored cycles %+v, %v; want cycle 2 failed", cycles, err)
	}
	next, err := tn.Cycle(context.Background(), job, Budget{Evals: 4}, "api", 1, nil)
	if err != nil || next.ID != 3 || next.State != "done" {
		t.Fatalf("cycle after the limit went = %+v, %v; want cycle 3 done", next, err)
	}
	if err := st.Check(); err != nil {
		t.Error(err)
	}
}

// racer records what the tuner tells an evaluate.Racer.
type racer struct {
	evaluate.Evaluator
	told []float64
}

func (r *racer) Race(p evaluate.Problem, bestMS float64) { r.told = append(r.told, bestMS) }

// A time objective tells the evaluator each new best of the cycle, so it
// can race; any other objective, even a weighted sum that reads time only,
// tells it nothing (its best is not a time).
func TestCycleTellsRacer(t *testing.T) {
	job := reduceJob(t)
	r := &racer{Evaluator: job.Evaluator}
	job.Evaluator = r
	cy, err := newTuner(storetest.New(t)).Cycle(context.Background(), job, Budget{Evals: 10}, "api", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.told) == 0 || r.told[len(r.told)-1] != cy.BestMS {
		t.Fatalf("told %v, want a run of bests ending at the cycle's best %v", r.told, cy.BestMS)
	}
	for i := 1; i < len(r.told); i++ {
		if r.told[i] >= r.told[i-1] {
			t.Errorf("told %v: each best should improve on the one before", r.told)
		}
	}
	r.told = nil
	job.Objective = evaluate.Objective{Kind: "weighted", WTime: 2}
	if cy, err := newTuner(storetest.New(t)).Cycle(context.Background(), job, Budget{Evals: 4}, "api", 1, nil); err != nil || cy.BestKey == "" {
		t.Fatalf("weighted objective: %+v, %v", cy, err)
	}
	if len(r.told) != 0 {
		t.Errorf("weighted objective: told %v, want nothing", r.told)
	}
}

// A policy stored by a portfolio with a member the running one no longer
// has (schedules, which left quasimd's default portfolio) cannot be
// restored: the next cycle starts a fresh search told every stored trial,
// so it loses nothing and measures nothing twice.
func TestPolicyOfRemovedMemberStartsAfresh(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	portfolio := func(members ...evolve.Member) func(*genome.Space, uint64) evolve.Strategy {
		return func(s *genome.Space, seed uint64) evolve.Strategy {
			return evolve.NewPortfolio(s, seed, members, evolve.PortfolioOptions{Init: 3})
		}
	}
	es := evolve.Member{Name: "es", New: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }}
	rnd := evolve.Member{Name: "random", New: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewRandom(s, seed) }}
	_, key, _ := ed25519.GenerateKey(nil)
	old := New(Config{Store: st, Signer: key, NewStrategy: portfolio(es, rnd)})
	if _, err := old.Cycle(context.Background(), job, Budget{Evals: 10}, "cron", 1, nil); err != nil {
		t.Fatal(err)
	}
	policy, ok, err := st.Policy(job.Key)
	if err != nil || !ok {
		t.Fatalf("no policy stored: %v", err)
	}
	if err := portfolio(es)(job.Space, 1).UnmarshalBinary(policy); err == nil {
		t.Fatal("a policy of two members restored into a portfolio of one")
	}
	cy, err := New(Config{Store: st, Signer: key, NewStrategy: portfolio(es)}).Cycle(context.Background(), job, Budget{Evals: 10}, "cron", 1, nil)
	if err != nil || cy.State != "done" || cy.Evals != 10 {
		t.Fatalf("cycle after the member left = %+v, %v", cy, err)
	}
	checkTrialsOnce(t, st, job, 20)
}

// checkTrialsOnce checks that the job has want trials, none of a config
// measured twice.
func checkTrialsOnce(t *testing.T, st *store.Store, job Job, want int) {
	t.Helper()
	trials, err := st.Trials(job.Key)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, tr := range trials {
		if keys[tr.Key] {
			t.Errorf("%s measured twice", tr.Key)
		}
		keys[tr.Key] = true
	}
	if len(trials) != want {
		t.Errorf("%d trials, want %d", len(trials), want)
	}
}

package tuner

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evaluate/harness"
	"github.com/quasim/quasim/evaluate/wasm"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// The faults injected into evaluators. A config of kind none or slow may
// be served (slow only when it is truly the fastest correct config); any
// other kind never.
const (
	kindNone    = "none"
	kindCrash   = "crash"   // the kernel or its process dies
	kindHang    = "hang"    // a run never returns
	kindGarbage = "garbage" // the answer is no measurement (not JSON, negative times)
	kindNaN     = "nan"     // NaN where a number belongs
	kindWrong   = "wrong"   // the output is wrong, however fast
	kindSlow    = "slow"    // right, but slower than it should be
	kindFail    = "fail"    // the evaluator says the config cannot run
)

// faultCount is how many faults TestInjectedFaults injects in all, spread
// over the builtin, exec and wasm evaluators: QUASIM_FAULTS, or 60.
func faultCount(t *testing.T) int {
	n := 60
	if testing.Short() {
		n = 15 // CI's race pass (43 s under -race with 60); go test ./... injects 60
	}
	if s := os.Getenv("QUASIM_FAULTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 3 {
			t.Fatalf("QUASIM_FAULTS=%q: want a count of at least 3", s)
		}
		n = v
	}
	return n
}

// faulty is this test's fake at the measurement boundary: it wraps a real
// builtin kernel and, for the configs its seeded hash picks, answers as a
// broken device or measurement layer would (the builtin kernels run in
// process and cannot crash, hang or report NaN by themselves). Slow
// configs are really measured, their times scaled up. Wrong outputs are
// real: sgemm's ikj_fast variant (builtin.Options.TestWrongVariant) drops
// the last partial block of rows.
type faulty struct {
	*builtin.Kernel
	seed uint64
	// every, when set, is the fault of every config but notKey.
	every, notKey string
}

func (f *faulty) kind(key string) (kind string, mustFail bool) {
	if f.every != "" {
		if key == f.notKey {
			return kindNone, false
		}
		return f.every, true
	}
	if strings.Contains(key, ",ikj_fast,") {
		return kindWrong, false
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", f.seed, key)
	switch u := h.Sum64() % 100; {
	case u < 8:
		return kindCrash, true
	case u < 16:
		return kindHang, true
	case u < 24:
		return kindGarbage, true
	case u < 32:
		return kindNaN, true
	case u < 44:
		return kindSlow, false
	}
	return kindNone, false
}

func (f *faulty) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	sp, err := f.Space(p)
	if err != nil {
		return evaluate.Trial{}, err
	}
	tr := evaluate.Trial{Key: sp.Key(c), Device: f.Device(), At: time.Now()}
	kind, _ := f.kind(tr.Key)
	switch kind {
	case kindCrash:
		tr.Status, tr.Error = evaluate.StatusRuntime, "injected: the kernel crashed"
		return tr, nil
	case kindHang:
		// The measurement gives up on a device that stopped answering.
		timer := time.NewTimer(time.Millisecond)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return tr, ctx.Err()
		case <-timer.C:
		}
		tr.Status, tr.Error = evaluate.StatusTimeout, "injected: no answer within the limit"
		return tr, nil
	case kindGarbage: // a clock gone backwards
		tr.Status, tr.Time, tr.Times = evaluate.StatusOK, -1, []float64{-1, -1, 3}
		return tr, nil
	case kindNaN:
		tr.Status, tr.Time, tr.Times = evaluate.StatusOK, math.NaN(), []float64{math.NaN(), 1, math.NaN()}
		return tr, nil
	}
	tr, err = f.Kernel.Evaluate(ctx, c, p)
	if kind == kindSlow && tr.OK() {
		for i := range tr.Times {
			tr.Times[i] *= 4
		}
		tr.Time *= 4
	}
	return tr, err
}

// faultRun is one evaluator under injected faults: its jobs are tuned
// until enough faults were measured, and every job is checked after each
// cycle.
type faultRun struct {
	name   string
	eval   evaluate.Evaluator
	kind   func(key string) (string, bool)
	budget int // evaluations per cycle
	// problems gives the i-th job's problem; cycles of one job repeat
	// until its space is spent, then the next job starts.
	problem func(i int) evaluate.Problem
}

// faultStats sums what a faultRun saw.
type faultStats struct {
	faults   map[string]int // measured trials by fault kind
	rejected int            // configs verification marked wrong_result
	served   int            // jobs left serving a certified config
	wrong    int            // faulty configs certified or served: must stay 0
	cycles   int
}

// injected counts the faults of m: every kind but none.
func injected(m map[string]int) int {
	n := 0
	for k, v := range m {
		if k != kindNone {
			n += v
		}
	}
	return n
}

func (r faultRun) run(t *testing.T, st *store.Store, tn *Tuner, want int) faultStats {
	t.Helper()
	s := faultStats{faults: map[string]int{}}
	done := 0 // faults of the jobs finished
	for i := 0; done < want; i++ {
		p := r.problem(i)
		sp, err := r.eval.Space(p)
		if err != nil {
			t.Fatal(err)
		}
		job := Job{
			Key:     store.JobKey{Kernel: r.name, SpecHash: "faults", Problem: p.String(), Device: r.eval.Device()},
			Problem: p, Evaluator: r.eval, Space: sp, Default: sp.Default(),
		}
		var last faultStats
		for {
			before, _ := st.TrialCount(job.Key)
			cy, err := tn.Cycle(context.Background(), job, Budget{Evals: r.budget}, "api", uint64(i+1), nil)
			if err != nil {
				t.Fatalf("%s cycle of %s: %v", r.name, job.Key, err)
			}
			s.cycles++
			last = r.check(t, st, job)
			after, _ := st.TrialCount(job.Key)
			if done+injected(last.faults) >= want || after == before || cy.Evals < r.budget {
				break // enough, or the space is spent
			}
		}
		for k, v := range last.faults {
			s.faults[k] += v
		}
		s.rejected += last.rejected
		s.served += last.served
		s.wrong += last.wrong
		done += injected(last.faults)
	}
	return s
}

// check asserts what must hold of job whatever faults were injected, and
// counts its trials by fault kind.
func (r faultRun) check(t *testing.T, st *store.Store, job Job) faultStats {
	t.Helper()
	s := faultStats{faults: map[string]int{}}
	trials, err := st.Trials(job.Key)
	if err != nil {
		t.Fatal(err)
	}
	fastest := math.Inf(1)
	byKey := map[string]store.Trial{}
	for _, tr := range trials {
		byKey[tr.Key] = tr
		kind, mustFail := r.kind(tr.Key)
		s.faults[kind]++
		if mustFail && tr.Status == string(evaluate.StatusOK) {
			t.Errorf("%s %s: %s fault stored as ok (%v ms)", job.Key, tr.Key, kind, tr.TimeMS)
		}
		if tr.Status == string(evaluate.StatusWrongResult) {
			s.rejected++
		}
		if tr.Status == string(evaluate.StatusOK) {
			fastest = min(fastest, tr.TimeMS)
		}
	}
	metas, err := st.JobCerts(job.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range metas {
		if kind, _ := r.kind(m.Key); kind != kindNone && kind != kindSlow {
			t.Errorf("%s: certificate %s for %s, a %s config", job.Key, m.ID, m.Key, kind)
			s.wrong++
		}
	}
	sv, ok, err := st.Served(job.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return s
	}
	s.served++
	if kind, _ := r.kind(sv.Key); kind != kindNone && kind != kindSlow {
		t.Errorf("%s serves %s, a %s config", job.Key, sv.Key, kind)
		s.wrong++
	}
	if tr := byKey[sv.Key]; tr.Status != string(evaluate.StatusOK) || sv.Certificate == "" {
		t.Errorf("%s serves %s: trial %s, certificate %q", job.Key, sv.Key, tr.Status, sv.Certificate)
	}
	// Every faster ok trial would have been verified first and failed.
	// (The served time is the certificate's; the search's is the trial's.)
	if tr := byKey[sv.Key]; tr.TimeMS > fastest {
		t.Errorf("%s serves %s, %v ms in the search; an ok trial took %v ms", job.Key, sv.Key, tr.TimeMS, fastest)
	}
	return s
}

// buildFaultKernels builds the fault-injecting exec harness and wasm
// kernel of the evaluate tests.
func buildFaultKernels(t *testing.T) (fake, kernel string) {
	t.Helper()
	dir := t.TempDir()
	fake, kernel = filepath.Join(dir, "fakeharness"), filepath.Join(dir, "testkernel.wasm")
	if out, err := exec.Command("go", "build", "-o", fake, "../../evaluate/harness/testdata/fakeharness").CombinedOutput(); err != nil {
		t.Fatalf("go build fakeharness: %v\n%s", err, out)
	}
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", kernel, "../../evaluate/wasm/testdata/testkernel")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build testkernel: %v\n%s", err, out)
	}
	return fake, kernel
}

// TestInjectedFaults is the fault soak of docs/evidence/reliability.md:
// QUASIM_FAULTS faults (crash, hang, garbage, NaN, wrong output, slow),
// a third each into the builtin, exec and wasm evaluators, through real
// cycles on a real store. No faulty config may be stored as ok where the
// fault leaves no measurement, certified or served, and a slow one only
// when it is truly the fastest correct config.
func TestInjectedFaults(t *testing.T) {
	want := faultCount(t)
	fake, kernel := buildFaultKernels(t)
	st := storetest.New(t)
	tn := newTuner(st)

	bk, err := builtin.New("sgemm", builtin.Options{Reps: evaluate.Reps{Max: 3}, TestWrongVariant: true})
	if err != nil {
		t.Fatal(err)
	}
	bf := &faulty{Kernel: bk, seed: 1}
	// m = 100 is no multiple of any tile, so ikj_fast is wrong everywhere.
	builtinRun := faultRun{name: "sgemm", eval: bf, kind: bf.kind, budget: 24,
		problem: func(i int) evaluate.Problem { return evaluate.Problem{Dims: []int{100, 48 + 8*i, 40}} }}

	h, err := harness.Start(harness.Options{Command: []string{fake}, Env: []string{"FAKE_MODES=ok,crash,hang,garbage,nan,wrongsum,wrongfast,slow"},
		Timeout: 300 * time.Millisecond, Reps: evaluate.Reps{Max: 5}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	execKinds := map[string]string{"ok": kindNone, "crash": kindCrash, "hang": kindHang, "garbage": kindGarbage, "nan": kindNaN,
		"wrongsum": kindWrong, "wrongfast": kindWrong, "slow": kindSlow}
	execRun := faultRun{name: "fake", eval: h, budget: 32,
		kind: func(key string) (string, bool) {
			mode, _, _ := strings.Cut(key, ",")
			k := execKinds[mode]
			return k, k != kindNone && k != kindSlow && k != kindWrong
		},
		problem: func(i int) evaluate.Problem { return evaluate.Problem{Dims: []int{64 + i}} }}

	w, err := wasm.Load(context.Background(), kernel, wasm.Options{Reps: evaluate.Reps{Min: 3, Max: 3}, Timeout: 300 * time.Millisecond, MemoryLimitMiB: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	// The test kernel's checksum is n (so n = 2 is wrong against the
	// default's 1) or NaN in mode nan; slow runs 50 ms a run, hang 1 s, past
	// the 300 ms limit, and spin never returns (the evaluator's guarded
	// first run of a config stops it at the limit).
	wasmKinds := map[string]string{"ok": kindNone, "panic": kindCrash, "oom": kindCrash, "hang": kindHang, "spin": kindHang, "invalid": kindFail, "slow": kindSlow, "nan": kindNaN}
	wasmRun := faultRun{name: "testkernel", eval: w, budget: 14,
		kind: func(key string) (string, bool) {
			mode, n, _ := strings.Cut(key, ",")
			k := wasmKinds[mode]
			switch {
			case k == kindNaN: // measured fine; only its output is NaN
				return k, false
			case n == "2" && (k == kindNone || k == kindSlow):
				return kindWrong, false
			}
			return k, k != kindNone && k != kindSlow
		},
		problem: func(i int) evaluate.Problem { return evaluate.Problem{Dims: []int{1 + i}} }}

	t0 := time.Now()
	all := map[string]int{}
	served, wrong := 0, 0
	for i, r := range []faultRun{builtinRun, execRun, wasmRun} {
		share := want / 3
		if i < want%3 {
			share++
		}
		s := r.run(t, st, tn, share)
		for k, v := range s.faults {
			all[k] += v
		}
		served, wrong = served+s.served, wrong+s.wrong
		t.Logf("%s (%s): %d faults in %d cycles %v; %d configs rejected by verification; %d jobs serving a certified config",
			r.name, r.eval.Device(), injected(s.faults), s.cycles, s.faults, s.rejected, s.served)
	}
	n := injected(all)
	if n < want {
		t.Errorf("%d faults injected, want %d", n, want)
	}
	if served == 0 {
		t.Errorf("no job serves anything: the checks above checked nothing served")
	}
	t.Logf("%d faults injected (%v) in %s; faulty configs certified or served: %d", n, all, time.Since(t0).Round(time.Millisecond), wrong)
}

// An evaluator that answers ok with a NaN or a negative time: the trial is
// a runtime failure saying what was reported, the cycle finishes, and the
// default is served. Before, a NaN failed every checkpoint of the job (JSON
// cannot hold it) and a negative time made its config the fastest, so it
// was certified and served.
func TestImplausibleTimes(t *testing.T) {
	for _, kind := range []string{kindNaN, kindGarbage} {
		t.Run(kind, func(t *testing.T) {
			st := storetest.New(t)
			k, err := builtin.New("reduce", builtin.Options{Reps: evaluate.Reps{Max: 3}})
			if err != nil {
				t.Fatal(err)
			}
			job := reduceJob(t)
			f := &faulty{Kernel: k, every: kind, notKey: job.Space.Key(job.Default)}
			job.Evaluator = f
			if _, err := newTuner(st).Cycle(context.Background(), job, Budget{Evals: 6}, "api", 1, nil); err != nil {
				t.Fatalf("cycle: %v", err)
			}
			trials, _ := st.Trials(job.Key)
			for _, tr := range trials {
				if tr.Key != f.notKey && (tr.Status != string(evaluate.StatusRuntime) || !strings.Contains(tr.Error, "not a measurement")) {
					t.Errorf("trial %s: %s %q, want runtime, not a measurement", tr.Key, tr.Status, tr.Error)
				}
			}
			if sv, ok, _ := st.Served(job.Key); !ok || sv.Key != f.notKey {
				t.Errorf("served %+v (%v), want the default %s", sv, ok, f.notKey)
			}
		})
	}
}

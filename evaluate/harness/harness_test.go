package harness

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

var fakeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakeharness")
	if err != nil {
		panic(err)
	}
	fakeBin = filepath.Join(dir, "fakeharness")
	if out, err := exec.Command("go", "build", "-o", fakeBin, "./testdata/fakeharness").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func start(t *testing.T) *Harness {
	t.Helper()
	h, err := Start(Options{Command: []string{fakeBin}, Timeout: 500 * time.Millisecond, Reps: evaluate.Reps{Max: 12}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func config(t *testing.T, h *Harness, mode string, n int) (genome.Config, *genome.Space) {
	t.Helper()
	sp, err := h.Space(evaluate.Problem{Dims: []int{64}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sp.ParseKey(mode + "," + string(rune('0'+n)))
	if err != nil {
		t.Fatal(err)
	}
	return c, sp
}

func TestFaultsCostOneTrial(t *testing.T) {
	t.Parallel()
	h := start(t)
	if h.Device() != "exec/fake" || h.Hello().Version != "1" {
		t.Errorf("device %q hello %+v", h.Device(), h.Hello())
	}
	ctx := context.Background()
	p := evaluate.Problem{Dims: []int{64}}
	tests := []struct {
		mode   string
		status evaluate.Status
		note   string
	}{
		{"ok", evaluate.StatusOK, ""},
		{"crash", evaluate.StatusRuntime, "crashing as asked"},
		{"ok", evaluate.StatusOK, ""},
		{"hang", evaluate.StatusTimeout, "no answer within"},
		{"ok", evaluate.StatusOK, ""},
		{"garbage", evaluate.StatusRuntime, "this is not JSON"},
		{"ok", evaluate.StatusOK, ""},
		{"fail", evaluate.StatusCompile, "does not compile"},
		{"ok", evaluate.StatusOK, ""},
	}
	for i, tt := range tests {
		c, _ := config(t, h, tt.mode, 3)
		tr, err := h.Evaluate(ctx, c, p)
		if err != nil {
			t.Fatalf("%d %s: %v", i, tt.mode, err)
		}
		if tr.Status != tt.status || !strings.Contains(tr.Error, tt.note) {
			t.Errorf("%d %s: status %s error %q, want %s with %q", i, tt.mode, tr.Status, tr.Error, tt.status, tt.note)
		}
		if tt.status == evaluate.StatusOK && (tr.Time != 2.51 || len(tr.Times) != 3) {
			t.Errorf("%d ok: time %v times %v, want the median 2.51 of 3 (after a warm-up run)", i, tr.Time, tr.Times)
		}
	}
}

// A process that a request left broken (a kernel writing out of bounds
// corrupts the worker's heap) crashes on the next request: that request
// runs again in a fresh process and counts as it does there. A config
// that crashes in a fresh process too is its own fault, and says so.
func TestCrashAfterAnotherRequestRetried(t *testing.T) {
	t.Parallel()
	h, err := Start(Options{Command: []string{fakeBin}, Timeout: 500 * time.Millisecond, Reps: evaluate.Reps{Max: 12},
		Env: []string{"FAKE_MODES=ok,crash,poison"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	p := evaluate.Problem{Dims: []int{64}}
	for i, tt := range []struct {
		mode, note string
		status     evaluate.Status
	}{
		{"poison", "", evaluate.StatusOK},
		{"ok", "", evaluate.StatusOK}, // its first process aborts: not its fault
		{"crash", "crashing as asked (again in a fresh process: harness exited during the run", evaluate.StatusRuntime},
		{"ok", "", evaluate.StatusOK},
	} {
		c, _ := config(t, h, tt.mode, 3)
		tr, err := h.Evaluate(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Status != tt.status || !strings.Contains(tr.Error, tt.note) {
			t.Errorf("%d %s: status %s error %q, want %s with %q", i, tt.mode, tr.Status, tr.Error, tt.status, tt.note)
		}
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx := context.Background()
	p := evaluate.Problem{Dims: []int{64}}
	c, _ := config(t, h, "ok", 4)
	rep, err := h.Verify(ctx, c, p, evaluate.VerifySettings{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed() || !rep.Determinism.Identical || rep.Parity.Reference == "" {
		t.Errorf("ok config: %+v", rep)
	}
	c, _ = config(t, h, "wrongsum", 4)
	rep, err = h.Verify(ctx, c, p, evaluate.VerifySettings{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Parity.Passed || rep.Passed() {
		t.Errorf("wrong checksum passed parity: %+v", rep.Parity)
	}
	c, _ = config(t, h, "crash", 4)
	rep, err = h.Verify(ctx, c, p, evaluate.VerifySettings{})
	if err != nil || rep.Passed() || !strings.Contains(rep.Parity.Worst, "runtime") {
		t.Errorf("crashing config: %+v, %v", rep.Parity, err)
	}
}

func TestCancelledRun(t *testing.T) {
	t.Parallel()
	h, err := Start(Options{Command: []string{fakeBin}, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c, _ := config(t, h, "hang", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := h.Evaluate(ctx, c, evaluate.Problem{Dims: []int{64}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Evaluate with a cancelled context = %v", err)
	}
	ok, _ := config(t, h, "ok", 1)
	if tr, err := h.Evaluate(context.Background(), ok, evaluate.Problem{Dims: []int{64}}); err != nil || !tr.OK() {
		t.Errorf("after the cancel: %+v, %v", tr, err)
	}
}

func TestBadHarnesses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cmd  []string
		env  string
		want string
	}{
		{[]string{filepath.Join(t.TempDir(), "missing")}, "", "no such file"},
		{[]string{"/bin/true"}, "", "exited before its hello"},
		{[]string{fakeBin}, "bad", "protocol 99"},
		{[]string{fakeBin}, "none", "no hello within"},
	} {
		_, err := Start(Options{Command: tt.cmd, HelloTimeout: 300 * time.Millisecond, Env: []string{"FAKE_HELLO=" + tt.env}})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.cmd[0]) {
			t.Errorf("Start(%v, FAKE_HELLO=%q) = %v, want an error naming it and %q", tt.cmd, tt.env, err, tt.want)
		}
	}
}

// A harness that never says hello is killed as soon as the caller's ctx
// is done, long before its hello timeout.
func TestStartContextCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	t0 := time.Now()
	_, err := StartContext(ctx, Options{Command: []string{fakeBin}, HelloTimeout: time.Minute, Env: []string{"FAKE_HELLO=none"}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for its hello") {
		t.Fatalf("StartContext cancelled = %v, want context.Canceled while waiting for the hello", err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("StartContext returned %s after its ctx was cancelled at 200ms", d)
	}
}

func TestRepetitions(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx := context.Background()
	p := evaluate.Problem{Dims: []int{64}}

	// The warm-up run's time (the first, 100 ms) is left out; three steady
	// runs are enough; the harness's energy per run becomes the trial's.
	c, _ := config(t, h, "cold", 2)
	before := h.nextID
	tr, err := h.Evaluate(ctx, c, p)
	if err != nil || !tr.OK() {
		t.Fatalf("cold: %+v, %v", tr, err)
	}
	if len(tr.Times) != 3 || slices.Max(tr.Times) > 3 || h.nextID-before != 1 {
		t.Errorf("cold: times %v in %d requests, want 3 steady ones in 1", tr.Times, h.nextID-before)
	}
	if tr.EnergyMJ != 500 || math.Abs(tr.PowerW-500/tr.Time) > 1e-9 {
		t.Errorf("cold: energy %v mJ, power %v W, want 500 mJ at %v W", tr.EnergyMJ, tr.PowerW, 500/tr.Time)
	}

	// Times that never settle are asked for in doubling batches up to Max:
	// 3 (+1 warm-up), 3, 6.
	c, _ = config(t, h, "noisy", 2)
	before = h.nextID
	tr, err = h.Evaluate(ctx, c, p)
	if err != nil || !tr.OK() || len(tr.Times) != 12 || h.nextID-before != 3 {
		t.Errorf("noisy: %d times in %d requests (%v), want 12 in 3", len(tr.Times), h.nextID-before, err)
	}
	// Raced against a best of 1 ms, runs of 10-12 ms stop after the first
	// batch; against 10 ms, or another problem's best, they go on.
	c, _ = config(t, h, "noisy", 3)
	for _, race := range []struct {
		p      evaluate.Problem
		bestMS float64
		times  int
	}{{p, 1, 3}, {p, 10, 12}, {evaluate.Problem{Dims: []int{32}}, 1, 12}} {
		h.Race(race.p, race.bestMS)
		before = h.nextID
		tr, err = h.Evaluate(ctx, c, p)
		if err != nil || !tr.OK() || len(tr.Times) != race.times {
			t.Errorf("noisy n=3 raced against %v ms on %v: %d times in %d requests (%v), want %d", race.bestMS, race.p, len(tr.Times), h.nextID-before, err, race.times)
		}
		h.Race(race.p, 0)
	}
	// Runs of 100-500 ms (as reported) against the 500 ms request timeout:
	// one run a request after the first, until 2 s of runs (MaxTime).
	c, _ = config(t, h, "noisy", 4)
	before = h.nextID
	tr, err = h.Evaluate(ctx, c, p)
	sum := 0.0
	for _, x := range tr.Times {
		sum += x
	}
	if err != nil || !tr.OK() || h.nextID-before != 1+len(tr.Times)-3 || sum < 2000 || sum-tr.Times[len(tr.Times)-1] >= 2000 {
		t.Errorf("slow noisy: times %v in %d requests (%v), want 3 then one a request up to 2 s", tr.Times, h.nextID-before, err)
	}
}

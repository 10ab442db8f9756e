package harness

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
	h, err := Start(Options{Command: []string{fakeBin}, Timeout: 500 * time.Millisecond, Repetitions: 5})
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
		if tt.status == evaluate.StatusOK && (tr.Time != 2.51 || len(tr.Times) != 5) {
			t.Errorf("%d ok: time %v times %v, want the median 2.51 of 5", i, tr.Time, tr.Times)
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
	if !rep.Passed() || !rep.Determinism.Identical || rep.Latency.MedianMS == 0 || rep.Parity.Reference == "" {
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

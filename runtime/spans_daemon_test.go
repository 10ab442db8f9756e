package runtime_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/runtime"
)

// The three span recorders against the real daemon (in-process, on a real
// Unix socket): their iterations are stored and profiled by
// GET /v1/causal/{pipeline}, and an undeclared pipeline is counted as
// rejected with the daemon's reason. (C and Python where gcc and python3
// are found.)
func TestSpansAgainstDaemon(t *testing.T) {
	files := map[string]string{}
	for _, p := range []string{"fj", "c-fj", "py-fj"} {
		files[p+".yaml"] = "pipeline: " + p + "\n"
	}
	sock, _ := startDaemonFiles(t, files)
	ctx := context.Background()

	rec := recorder(t, sock, "fj", runtime.SpanOptions{Device: "cpu0"})
	for range 3 {
		fork(rec)
		rec.NextIteration()
	}
	closeRec(t, rec)
	if st := rec.Stats(); st.Sent != 12 || st.DepsDropped != 0 || st.LastError != "" {
		t.Errorf("Go: Stats() = %+v, want 12 sent", st)
	}
	nope := recorder(t, sock, "nope", runtime.SpanOptions{})
	nope.Start("a", "", "s0").End()
	closeRec(t, nope)
	if st := nope.Stats(); st.Rejected != 1 || !strings.Contains(st.LastError, `pipeline "nope" is not declared`) {
		t.Errorf("Go, undeclared pipeline: Stats() = %+v, want 1 rejected, saying why", st)
	}

	if _, err := exec.LookPath("gcc"); err == nil {
		if out, err := exec.Command(buildTestSpans(t), sock, "e2e").CombinedOutput(); err != nil {
			t.Errorf("test_spans %s e2e: %v\n%s", sock, err, out)
		}
	}
	if py, err := exec.LookPath("python3"); err == nil {
		cmd := exec.Command(py, "-m", "unittest", "-v", "test_quasim_client.Spans.test_fork_join", "test_quasim_client.Spans.test_unknown_pipeline")
		cmd.Dir = "python"
		cmd.Env = append(cmd.Environ(), "QUASIM_TEST_SPANS_SOCKET="+sock, "PYTHONDONTWRITEBYTECODE=1")
		if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "skipped") {
			t.Errorf("python3 -m unittest: %v\n%s", err, out)
		}
	}

	want := map[string]int{"fj": 3}
	if _, err := exec.LookPath("gcc"); err == nil {
		want["c-fj"] = 2
	}
	if _, err := exec.LookPath("python3"); err == nil {
		want["py-fj"] = 2
	}
	c := &client.Client{Socket: sock}
	for p, iters := range want {
		prof, err := c.Causal(ctx, p)
		if err != nil {
			t.Errorf("causal %s: %v", p, err)
			continue
		}
		var kernels []string
		for _, k := range prof.Kernels {
			kernels = append(kernels, k.Kernel)
		}
		if prof.Iterations != iters || prof.Spans != 4*iters || len(prof.Skipped) != 0 || len(kernels) != 4 {
			t.Errorf("causal %s: %d iterations, %d spans, kernels %v, skipped %q; want %d iterations of a, b, c, d", p, prof.Iterations, prof.Spans, kernels, prof.Skipped, iters)
		}
	}
}

package runtime_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/causal"
)

// byPipeline groups the server's accepted batches by pipeline.
func (s *spanServer) byPipeline() map[string][][]causal.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][][]causal.Span{}
	for _, b := range s.batches {
		out[b[0].Pipeline] = append(out[b[0].Pipeline], b)
	}
	return out
}

// checkForkJoin checks two iterations of the fork-join pipeline the C and
// Python tests record (a; b and c after a on two streams; d after both):
// 8 spans with their deps, each iteration in one batch.
func checkForkJoin(t *testing.T, batches [][]causal.Span, device string) {
	t.Helper()
	n := 0
	for _, b := range batches {
		iters := map[int]int{}
		byKernel := map[string]causal.Span{}
		for _, s := range b {
			iters[s.Iteration]++
			byKernel[fmt.Sprint(s.Iteration, s.Kernel)] = s
			if s.Device != device || s.Problem != "64" {
				t.Errorf("span %+v, want device %q, problem 64", s, device)
			}
		}
		for it, k := range iters {
			if k != 4 {
				t.Errorf("iteration %d has %d spans in a batch, want all 4", it, k)
			}
			d := byKernel[fmt.Sprint(it, "d")]
			if len(d.Deps) != 2 || d.Deps[0] != byKernel[fmt.Sprint(it, "b")].ID || d.Deps[1] != byKernel[fmt.Sprint(it, "c")].ID {
				t.Errorf("iteration %d: d's deps %v, want b's and c's ids", it, d.Deps)
			}
		}
		n += len(b)
	}
	if n != 8 {
		t.Errorf("%d spans of the fork-join pipeline, want 8", n)
	}
}

// buildTestSpans compiles runtime/c/test_spans.c with the C client, with
// extra flags after the others.
func buildTestSpans(t testing.TB, extra ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the C client is not tested here")
	}
	bin := filepath.Join(t.TempDir(), "test_spans")
	args := append([]string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-pthread", "-o", bin,
		filepath.Join("c", "test_spans.c"), filepath.Join("c", "quasim.c")}, extra...)
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

var cPipelines = []string{"c-fj", "c-cap", "c-threads", "c-names", "c-429", "c-random"}

// The C client's span recorder, built with gcc, against a server that
// validates with causal.DecodeSpans.
func TestCSpans(t *testing.T) {
	testCSpans(t, buildTestSpans(t))
}

// The same under the address and undefined-behaviour sanitizers, and under
// the thread sanitizer (the launch threads, the sender and the mutex
// between them).
func TestCSpansSanitized(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	t.Run("asan", func(t *testing.T) {
		testCSpans(t, buildTestSpans(t, "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"))
	})
	t.Run("tsan", func(t *testing.T) {
		testCSpans(t, buildTestSpans(t, "-g", "-fsanitize=thread"))
	})
}

func testCSpans(t *testing.T, bin string) {
	srv := newSpanServer(t, cPipelines...)
	srv.limit("c-429", 2)
	out, err := exec.Command(bin, srv.sock).CombinedOutput()
	if err != nil {
		t.Fatalf("test_spans: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	got := srv.byPipeline()
	checkForkJoin(t, got["c-fj"], "cpu0")
	if b := got["c-429"]; len(b) != 1 || len(b[0]) != 4 {
		t.Errorf("c-429: batches %+v, want one of 4 spans after two 429s", b)
	}
	if b := got["c-cap"]; len(b) != 1 || len(b[0]) != 4 {
		t.Errorf("c-cap: batches %+v, want one of 4 spans", b)
	}
	if b := got["c-names"]; len(b) != 1 || b[0][0].Kernel != "q\"\\\n\x01é/k" || b[0][0].Stream != "s\t0" || b[0][0].Problem != "1,2" {
		t.Errorf("c-names: %+v, want the names as the C test wrote them", b)
	}
	ids := map[uint64]bool{}
	for _, b := range got["c-threads"] {
		for _, s := range b {
			ids[s.ID] = true
		}
	}
	if len(ids) != 4000 {
		t.Errorf("c-threads: %d distinct spans, want 4000", len(ids))
	}
}

// The Python client's span recorder, run by python3, against a server
// that validates with causal.DecodeSpans.
func TestPythonSpans(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python client is not tested here")
	}
	srv := newSpanServer(t, "py-fj", "py-cap", "py-threads", "py-429")
	srv.limit("py-429", 2)
	cmd := exec.Command(py, "-m", "unittest", "-v", "test_quasim_client.Spans",
		"test_quasim_client.WithoutDaemon.test_spans_without_daemon", "test_quasim_client.WithoutDaemon.test_spans_iteration_waits_for_its_spans",
		"test_quasim_client.Defines")
	cmd.Dir = "python"
	cmd.Env = append(cmd.Environ(), "QUASIM_TEST_SPANS_SOCKET="+srv.sock, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "skipped") {
		t.Fatalf("Python span tests were skipped:\n%s", out)
	}
	t.Logf("%s", out)
	got := srv.byPipeline()
	checkForkJoin(t, got["py-fj"], "cpu0")
	if b := got["py-429"]; len(b) != 1 || len(b[0]) != 4 {
		t.Errorf("py-429: batches %+v, want one of 4 spans after two 429s", b)
	}
	if b := got["py-cap"]; len(b) != 1 || len(b[0]) != 4 {
		t.Errorf("py-cap: batches %+v, want one of 4 spans", b)
	}
	n := 0
	for _, b := range got["py-threads"] {
		n += len(b)
	}
	if n != 2000 {
		t.Errorf("py-threads: %d spans, want 2000", n)
	}
}

// BenchmarkCSpan reports the cost of the C client's start/end pair with a
// dep, as test_spans measures it (rounds of 4,096 with room in the buffer).
// Run it with -benchtime 1x.
//
//	go test ./runtime -run '^$' -bench CSpan -benchtime 1x -count 5
func BenchmarkCSpan(b *testing.B) {
	bin := buildTestSpans(b)
	srv := newSpanServer(b, cPipelines...)
	for b.Loop() {
		srv.limit("c-429", 2)
		out, err := exec.Command(bin, srv.sock).CombinedOutput()
		if err != nil {
			b.Fatalf("test_spans: %v\n%s", err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			var ns float64
			if n, _ := fmt.Sscanf(line, "span pair %f ns", &ns); n == 1 {
				b.ReportMetric(ns, "pair_ns")
			}
		}
		for len(srv.got) > 0 { // the server keeps each batch: let the next run's through
			<-srv.got
		}
	}
}

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/testload"
	"github.com/quasim/quasim/runtime"
)

const reduceSpec = `name: reduce
evaluator: builtin:reduce
problems: ["65536"]
schedule: "@every 1h"
budget: {evals: 6}
`

// startServed runs quasimd with the small reduce spec and waits until its
// first cycle serves a certified config.
func startServed(t *testing.T) *proc {
	t.Helper()
	d := start(t, newDir(t, map[string]string{"reduce.yaml": reduceSpec}))
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		var cfg api.Config
		out, _, code := d.ctl("config", "reduce", "--problem", "65536", "--json")
		if code == 0 && strings.Contains(out, `"match": "exact"`) {
			d.ctlJSON(&cfg, "config", "reduce", "--problem", "65536")
			if cfg.Certificate != "" {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no certified config of reduce within 60s:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The Python client, run by python3 against the real daemon.
func TestPythonClient(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python client is not tested here")
	}
	d := startServed(t)
	// AsUser runs as another user, in TestRuntimesAsUser.
	cmd := exec.Command(py, "-m", "unittest", "-v", "test_quasim_client.AgainstDaemon", "test_quasim_client.WithoutDaemon")
	cmd.Dir = filepath.Join("..", "..", "runtime", "python")
	cmd.Env = append(cmd.Environ(), "QUASIM_TEST_SOCKET="+d.socket, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "skipped") {
		t.Fatalf("Python tests were skipped with a daemon running:\n%s", out)
	}
	t.Logf("%s", out)
}

// The Go runtime, against the real binary: served config while it runs,
// the caller's defaults within the deadline once it is stopped. Not
// parallel: the deadline is 20 ms (50 with the margin).
func TestGoRuntime(t *testing.T) {
	d := startServed(t)
	rt := runtime.New(runtime.Options{Socket: d.socket, Timeout: 20 * time.Millisecond})
	ctx := context.Background()
	if res := rt.Lookup(ctx, "reduce", []int{65536}, map[string]any{"block": 1}); res.Match != api.MatchExact || res.Certificate == "" {
		t.Fatalf("Lookup with the daemon up = %+v", res)
	}
	d.stop()
	cold := runtime.New(runtime.Options{Socket: d.socket, Timeout: 20 * time.Millisecond})
	defaults := map[string]any{"block": 1}
	start := time.Now()
	res := cold.Lookup(ctx, "reduce", []int{65536}, defaults)
	took := time.Since(start)
	if res.Match != "" || res.Config["block"] != 1 || res.Reason == "" {
		t.Fatalf("Lookup with the daemon stopped = %+v, want the defaults and why", res)
	}
	if took > 20*time.Millisecond+30*time.Millisecond {
		t.Errorf("Lookup with the daemon stopped took %s, deadline 20ms", took)
	}
	t.Logf("daemon stopped: defaults in %s (%s)", took, res.Reason)
}

// cc compiles the C client with one of its programs, strictly, into dir.
func cc(t *testing.T, dir, prog string, extra ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the C client is not tested here")
	}
	src := filepath.Join("..", "..", "runtime", "c")
	bin := filepath.Join(dir, strings.TrimSuffix(prog, ".c"))
	args := append([]string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-pthread", "-o", bin,
		filepath.Join(src, prog), filepath.Join(src, "quasim.c")}, extra...)
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// The C client, built with gcc, against the real daemon.
func TestCClient(t *testing.T) {
	t.Parallel()
	bin := cc(t, t.TempDir(), "test_quasim.c")
	d := startServed(t)
	cmd := exec.Command(bin, d.socket)
	cmd.Env = append(cmd.Environ(), fmt.Sprintf("QUASIM_TEST_LOAD_FACTOR=%g", testload.Factor()))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("test_quasim: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// The C client's JSON parser on fixed cases and 100,000 mutated answers,
// under the address and undefined-behaviour sanitizers.
func TestCParserFuzz(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	bin := cc(t, t.TempDir(), "fuzz_json.c", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all")
	out, err := exec.Command(bin, "100000").CombinedOutput()
	if err != nil {
		t.Fatalf("fuzz_json: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// BenchmarkCClient runs bench_quasim against the real daemon: the C
// client's round trip and cached lookup beside the floor of the same
// exchange with a bare Unix-socket echo server, measured in the same run.
// Run it with -benchtime 1x; it reports p50 in microseconds.
//
//	go test ./cmd/quasimd -run '^$' -bench CClient -benchtime 1x
func BenchmarkCClient(b *testing.B) {
	dir := b.TempDir()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		b.Skip("gcc not found")
	}
	src := filepath.Join("..", "..", "runtime", "c")
	bin := filepath.Join(dir, "bench_quasim")
	if out, err := exec.Command(gcc, "-std=c99", "-O2", "-pthread", "-o", bin, filepath.Join(src, "bench_quasim.c"), filepath.Join(src, "quasim.c")).CombinedOutput(); err != nil {
		b.Fatalf("gcc: %v\n%s", err, out)
	}
	d := start(b, newDir(b, map[string]string{"reduce.yaml": reduceSpec}))
	for deadline := time.Now().Add(testload.Scale(60 * time.Second)); ; {
		out, _, code := d.ctl("config", "reduce", "--problem", "65536", "--json")
		if code == 0 && strings.Contains(out, `"match": "exact"`) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("no served config within 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for b.Loop() {
		out, err := exec.Command(bin, d.socket, "reduce", "65536", "2000").CombinedOutput()
		if err != nil {
			b.Fatalf("bench_quasim: %v\n%s", err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			var what string
			var p50, p99 float64
			if n, _ := fmt.Sscanf(line, "%s p50 %f us p99 %f us", &what, &p50, &p99); n == 3 {
				b.ReportMetric(p50, what+"_p50_us")
				b.ReportMetric(p99, what+"_p99_us")
			}
		}
		b.Logf("%s", out)
	}
}

// A lookup for an untuned problem is answered from the nearest tuned one;
// with tune_on_miss it also queues a job for that problem, so a later
// lookup is exact, and the job survives a restart. A problem over the
// spec's on_miss bounds adds no job, and a job added says who asked.
func TestTuneOnMiss(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{"reduce.yaml": reduceSpec + "tune_on_miss: true\non_miss: {max_problem: 1000000, max_volume: 1000000}\n"})
	d := start(t, dir)
	waitServed(t, d, "65536")
	var near api.Config
	// Over the bounds: answered, but no job (and the rate limit not spent).
	d.ctlJSON(&near, "config", "reduce", "--problem", "8000000")
	if near.Match != api.MatchNearest || near.CertifiedFor != "65536" || !strings.Contains(near.Verification, "refused: tune_on_miss added no job for it: problem 8000000") {
		t.Fatalf("problem over the bounds: %+v, want nearest, certified for 65536, refused", near)
	}
	d.ctlJSON(&near, "config", "reduce", "--problem", "100000")
	if near.Match != api.MatchNearest || near.From != "65536" || near.CertifiedFor != "65536" || near.Verification != api.VerifyTuning {
		t.Fatalf("untuned problem: %+v, want nearest from 65536, certified for 65536, tuning", near)
	}
	cfg := waitServed(t, d, "100000")
	if cfg.Match != api.MatchExact || cfg.Certificate == "" {
		t.Fatalf("after the miss: %+v, want an exact, certified answer", cfg)
	}
	var cycles api.Cycles
	d.ctlJSON(&cycles, "cycles", "reduce")
	found := false
	for _, c := range cycles.Cycles {
		found = found || (c.Problem == "100000" && c.Trigger == "miss")
	}
	if !found {
		t.Errorf("no cycle triggered by the miss: %+v", cycles.Cycles)
	}
	// A second miss within the rate limit adds nothing.
	d.ctlJSON(&near, "config", "reduce", "--problem", "300000")
	var ks []api.Kernel
	d.ctlJSON(&ks, "kernels")
	if n := countProblems(ks, "reduce"); n != 2 {
		t.Errorf("reduce has %d problems after a rate-limited second miss, want 2", n)
	}
	asker := fmt.Sprintf("uid %d", os.Getuid())
	if by := requestedBy(ks, "reduce", "100000"); !strings.HasPrefix(by, asker) || requestedBy(ks, "reduce", "65536") != "" {
		t.Errorf("job at 100000 requested by %q, want %q; the spec's own job by %q, want none", by, asker, requestedBy(ks, "reduce", "65536"))
	}
	// Restart: the missed problem is still tuned and served, and still says
	// who asked.
	d.stop()
	d = start(t, dir)
	d.ctlJSON(&ks, "kernels")
	if n := countProblems(ks, "reduce"); n != 2 {
		t.Errorf("reduce has %d problems after a restart, want 2", n)
	}
	if by := requestedBy(ks, "reduce", "100000"); !strings.HasPrefix(by, asker) {
		t.Errorf("after a restart, job at 100000 requested by %q, want %q", by, asker)
	}
	if out, _, _ := d.ctl("kernels"); !strings.Contains(out, "reduce 100000: added by a lookup of "+asker) {
		t.Errorf("quasimctl kernels does not say who asked:\n%s", out)
	}
	d.ctlJSON(&cfg, "config", "reduce", "--problem", "100000")
	if cfg.Match != api.MatchExact {
		t.Errorf("after a restart: %+v, want exact", cfg)
	}
}

// requestedBy is who asked for kernel name's job at problem.
func requestedBy(ks []api.Kernel, name, problem string) string {
	for _, k := range ks {
		for _, j := range k.Jobs {
			if k.Name == name && j.Problem == problem {
				return j.RequestedBy
			}
		}
	}
	return ""
}

func countProblems(ks []api.Kernel, name string) int {
	for _, k := range ks {
		if k.Name == name {
			return len(k.Jobs)
		}
	}
	return 0
}

// waitServed waits until reduce at problem has an exact, certified answer.
func waitServed(t *testing.T, d *proc, problem string) api.Config {
	t.Helper()
	return waitServedKernel(t, d, "reduce", problem)
}

// waitServedKernel waits until kernel at problem has an exact, certified
// answer.
func waitServedKernel(t *testing.T, d *proc, kernel, problem string) api.Config {
	t.Helper()
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		var cfg api.Config
		out, _, code := d.ctl("config", kernel, "--problem", problem, "--json")
		if code == 0 && strings.Contains(out, `"match": "exact"`) {
			d.ctlJSON(&cfg, "config", kernel, "--problem", problem)
			if cfg.Certificate != "" {
				return cfg
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no certified config of %s at %s within 60s:\n%s", kernel, problem, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fetchCert gets and decodes certificate id from the daemon.
func fetchCert(t *testing.T, c *client.Client, id string) *certs.Certificate {
	t.Helper()
	body, _, err := c.Cert(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certs.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// Runtimes report latencies twice the certified median (and above its
// p95): the served config is marked stale (quasimctl status says why), a
// re-tune runs, and a newly certified config is served afterwards.
func TestDrift(t *testing.T) {
	t.Parallel()
	spec := strings.Replace(sgemmSpec, `["256,256,256", "128,128,128"]`, `["256,256,256"]`, 1)
	d := start(t, newDir(t, map[string]string{"sgemm.yaml": spec}))
	cfg := waitServedKernel(t, d, "sgemm", "256,256,256")
	c := &client.Client{Socket: d.socket}
	ctx := context.Background()
	cert := fetchCert(t, c, cfg.Certificate)
	// Drift is a median above the certified p95; on a loaded 2-core machine
	// that p95 can be over twice the median, so the reports are above both.
	slow := max(2*cert.Latency.MedianMS, 1.5*cert.Latency.P95MS)
	t.Logf("certified median %.4g ms, p95 %.4g ms; runtimes report %.4g ms", cert.Latency.MedianMS, cert.Latency.P95MS, slow)
	// A long cycle in flight, so the drift re-tune queues behind it and the
	// stale mark can be seen.
	if out, errs, code := d.ctl("tune", "sgemm", "--problem", "256,256,256", "--budget", "50"); code != 0 {
		t.Fatalf("tune: %d %s %s", code, out, errs)
	}
	lat := make([]float64, 20)
	for i := range lat {
		lat[i] = slow
	}
	// Too few runs say nothing yet.
	resp, err := c.Observe(ctx, api.ObservationsRequest{Observations: []api.Observation{{Kernel: "sgemm", Problem: "256,256,256", Key: cfg.Key, LatenciesMS: lat[:5], Source: "test"}}})
	if err != nil || resp.Stored != 5 || len(resp.Drift) != 0 {
		t.Fatalf("5 slow runs: %+v, %v; want stored, no drift", resp, err)
	}
	resp, err = c.Observe(ctx, api.ObservationsRequest{Observations: []api.Observation{{Kernel: "sgemm", Problem: "256,256,256", Key: cfg.Key, LatenciesMS: lat[5:], Source: "test"}}})
	if err != nil || resp.Stored != 15 || len(resp.Drift) != 1 {
		t.Fatalf("20 slow runs: %+v, %v; want drift", resp, err)
	}
	var st api.Status
	d.ctlJSON(&st, "status")
	if len(st.Stale) != 1 || !strings.Contains(st.Stale[0].Reason, "drift") {
		t.Fatalf("status stale = %+v, want the drifting job", st.Stale)
	}
	out, _, _ := d.ctl("status")
	if !strings.Contains(out, "drift: runtimes saw a median") {
		t.Errorf("quasimctl status does not say why:\n%s", out)
	}
	// Bad input names the field and stores nothing.
	if _, err := c.Observe(ctx, api.ObservationsRequest{Observations: []api.Observation{
		{Kernel: "sgemm", Problem: "256,256,256", Key: cfg.Key, LatenciesMS: []float64{1}},
		{Kernel: "sgemm", Problem: "256,256,256", Key: cfg.Key, LatenciesMS: []float64{-1}},
	}}); err == nil || !strings.Contains(err.Error(), "observations[1].latencies_ms[0]") {
		t.Errorf("negative latency: %v, want an error naming observations[1].latencies_ms[0]", err)
	}
	// The drift re-tune queues behind the 50-evaluation cycle.
	deadline := time.Now().Add(testload.Scale(4 * time.Minute))
	for {
		var now api.Config
		d.ctlJSON(&now, "config", "sgemm", "--problem", "256,256,256")
		var cycles api.Cycles
		d.ctlJSON(&cycles, "cycles", "sgemm")
		retuned := false
		for _, cy := range cycles.Cycles {
			retuned = retuned || (cy.Trigger == "drift" && cy.State == "done")
		}
		if retuned && now.Stale == "" && now.Certificate != "" && now.Certificate != cfg.Certificate {
			t.Logf("after the re-tune: %s (certificate %s), was %s", now.Key, now.Certificate, cfg.Key)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no re-tuned, re-certified config within 4 minutes: %+v", now)
		}
		time.Sleep(200 * time.Millisecond)
	}
	d.ctlJSON(&st, "status")
	if len(st.Stale) != 0 {
		t.Errorf("still stale after the re-tune: %+v", st.Stale)
	}
}

// A drift re-tune that keeps the served config (here the space has one
// config, so it must) verifies it again: the stale mark goes, and the
// config is served under a new certificate, as docs/runtime-authors/clients.md says.
func TestDriftSameConfig(t *testing.T) {
	t.Parallel()
	spec := reduceSpec + "parameters: {block: [1024], unroll: [2], workers: [1], acc: [float64]}\n"
	d := start(t, newDir(t, map[string]string{"reduce.yaml": spec}))
	cfg := waitServed(t, d, "65536")
	c := &client.Client{Socket: d.socket}
	ctx := context.Background()
	cert := fetchCert(t, c, cfg.Certificate)
	lat := make([]float64, 20)
	for i := range lat {
		lat[i] = 100 * cert.Latency.P95MS
	}
	resp, err := c.Observe(ctx, api.ObservationsRequest{Observations: []api.Observation{{Kernel: "reduce", Problem: "65536", Key: cfg.Key, LatenciesMS: lat, Source: "test"}}})
	if err != nil || len(resp.Drift) != 1 {
		t.Fatalf("20 slow runs: %+v, %v; want drift", resp, err)
	}
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		var cycles api.Cycles
		d.ctlJSON(&cycles, "cycles", "reduce")
		last := cycles.Cycles[len(cycles.Cycles)-1]
		if last.Trigger == "drift" && last.State != "running" && last.State != "waiting" {
			if last.State != "done" || last.Promoted != cfg.Key {
				t.Fatalf("drift cycle = %+v, want done, promoting %s again", last, cfg.Key)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no drift cycle ended within 60s: %+v", cycles.Cycles)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var now api.Config
	d.ctlJSON(&now, "config", "reduce", "--problem", "65536")
	if now.Key != cfg.Key || now.Stale != "" || now.Certificate == "" || now.Certificate == cfg.Certificate {
		t.Errorf("after the drift cycle: %s stale %q, certificate %s; want %s not stale, with a new certificate (was %s)",
			now.Key, now.Stale, now.Certificate, cfg.Key, cfg.Certificate)
	}
	var st api.Status
	d.ctlJSON(&st, "status")
	if len(st.Stale) != 0 {
		t.Errorf("status still lists stale jobs after re-verification: %+v", st.Stale)
	}
}

// The example C harness, built with gcc, tuned through the exec protocol
// by the real daemon: a certified config is served.
func TestExecHarness(t *testing.T) {
	t.Parallel()
	bin := buildCHarness(t, "matmul_harness", "-ffp-contract=fast")
	spec := "name: matmul\nevaluator: exec:" + bin + "\nproblems: [\"96\"]\nschedule: \"@every 1h\"\nbudget: {evals: 10}\ntimeout: 20s\n"
	d := start(t, newDir(t, map[string]string{"matmul.yaml": spec}))
	cfg := waitServedKernel(t, d, "matmul", "96")
	if len(cfg.Config) != 6 || cfg.Certificate == "" || cfg.Config["b_storage"] != "fp32" {
		t.Fatalf("served %+v", cfg)
	}
	out, _, code := d.ctl("certs", "show", cfg.Certificate)
	if code != 0 || !strings.Contains(out, "checksum") {
		t.Errorf("certs show: exit %d\n%s", code, out)
	}
	t.Logf("served %s (%.3f ms, certificate %s)", cfg.Key, cfg.TimeMS, cfg.Certificate)
	// Each trial took as many timed runs as the repetition rule asked for
	// (3 to 50), its time their median.
	var trials api.Trials
	d.ctlJSON(&trials, "trials", "matmul")
	var reps []int
	for _, tr := range trials.Trials {
		if tr.Status != "ok" {
			continue
		}
		reps = append(reps, len(tr.TimesMS))
		// Without an error budget the precision parameter the harness
		// declares (b_storage, stage input) stays at fp32.
		if strings.HasSuffix(tr.Key, ",fp16") {
			t.Errorf("trial %s: fp16 storage searched without an error budget", tr.Key)
		}
		if len(tr.TimesMS) < 3 || len(tr.TimesMS) > 50 || tr.TimeMS != evaluate.Median(tr.TimesMS) {
			t.Errorf("trial %s: %d times, time %v ms", tr.Key, len(tr.TimesMS), tr.TimeMS)
		}
	}
	t.Logf("timed runs per trial: %v", reps)
}

// buildCHarness builds examples/harness-c/NAME.c with gcc, warnings as
// errors, and skips the test when there is no gcc.
func buildCHarness(t *testing.T, name string, flags ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the C harness " + name + " is not tested here")
	}
	bin := filepath.Join(t.TempDir(), name)
	args := append([]string{"-O3", "-march=native", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o", bin}, flags...)
	if out, err := exec.Command(gcc, append(args, filepath.Join("..", "..", "examples", "harness-c", name+".c"))...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// A harness that crashes on some configs, hangs on others and prints
// garbage on others: the daemon runs on, those trials carry the right
// statuses, and a config that works is served with a certificate.
func TestExecHarnessFaults(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "fakeharness")
	if out, err := exec.Command("go", "build", "-o", bin, "../../evaluate/harness/testdata/fakeharness").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	spec := "name: fake\nevaluator: exec:" + bin + "\nproblems: [\"64\"]\nschedule: \"@every 1h\"\nbudget: {evals: 32}\ntimeout: 300ms\n"
	d := start(t, newDir(t, map[string]string{"fake.yaml": spec}))
	cfg := waitServedKernel(t, d, "fake", "64")
	if !strings.HasPrefix(cfg.Key, "ok,") || cfg.Certificate == "" {
		t.Errorf("served %+v, want an ok config, certified", cfg)
	}
	var trials api.Trials
	d.ctlJSON(&trials, "trials", "fake")
	want := map[string]string{"ok": "ok", "crash": "runtime", "hang": "timeout", "garbage": "runtime", "fail": "compile", "wrongsum": "ok", "cold": "ok", "noisy": "ok"}
	seen := map[string]bool{}
	for _, tr := range trials.Trials {
		mode, _, _ := strings.Cut(tr.Key, ",")
		seen[mode] = true
		if tr.Status != want[mode] {
			t.Errorf("trial %s: status %s (%s), want %s", tr.Key, tr.Status, tr.Error, want[mode])
		}
		// The harness reports 0.5 J a run in mode cold, and no energy otherwise.
		if e := map[bool]float64{true: 500}[mode == "cold"]; tr.EnergyMJ != e {
			t.Errorf("trial %s: energy %v mJ, want %v (from the harness)", tr.Key, tr.EnergyMJ, e)
		}
	}
	if len(seen) != len(want) || len(trials.Trials) != 32 {
		t.Errorf("%d trials over modes %v, want the whole space of 32", len(trials.Trials), seen)
	}
	var st api.Status
	d.ctlJSON(&st, "status")
	if st.Kernels != 1 {
		t.Errorf("status after the faults: %+v", st)
	}
}

// The example Go kernel compiled to WebAssembly, tuned by the real daemon
// under wazero: a certified config is served.
func TestWasmKernel(t *testing.T) {
	t.Parallel()
	mod := filepath.Join(t.TempDir(), "matmul.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", mod, "../../examples/wasm-kernel")
	cmd.Env = append(cmd.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build wasm: %v\n%s", err, out)
	}
	spec := "name: matmulwasm\nevaluator: wasm:" + mod + "\nproblems: [\"64\"]\nschedule: \"@every 1h\"\nbudget: {evals: 8}\n"
	d := start(t, newDir(t, map[string]string{"matmulwasm.yaml": spec}))
	cfg := waitServedKernel(t, d, "matmulwasm", "64")
	if len(cfg.Config) != 4 || cfg.Certificate == "" || cfg.Device != "wasm/wazero" {
		t.Fatalf("served %+v", cfg)
	}
	// The module reports a checksum, not its outputs: no error bound was
	// checked, and the certificate does not claim one.
	if out, _, code := d.ctl("certs", "verify", cfg.Certificate); code != 0 || !strings.Contains(out, "NOT CHECKED error_bound") || strings.Contains(out, "PASS error_bound") {
		t.Errorf("certs verify: exit %d\n%s", code, out)
	}
	t.Logf("served %s (%.3f ms, certificate %s)", cfg.Key, cfg.TimeMS, cfg.Certificate)
}

// The CUDA example harness, where nvcc and a GPU exist.
func TestCUDAHarness(t *testing.T) {
	t.Parallel()
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not found: the CUDA harness is built and tested only where the CUDA toolkit is installed")
	}
	bin := filepath.Join(t.TempDir(), "matmul_harness")
	if out, err := exec.Command(nvcc, "-O3", "-o", bin, filepath.Join("..", "..", "examples", "harness-cuda", "matmul_harness.cu")).CombinedOutput(); err != nil {
		t.Fatalf("nvcc: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin).CombinedOutput(); err != nil && strings.Contains(string(out), "no CUDA device") {
		t.Skip("no CUDA device: the CUDA harness is not run here")
	}
	spec := "name: matmulcuda\nevaluator: exec:" + bin + "\nproblems: [\"1024\"]\nschedule: \"@every 1h\"\nbudget: {evals: 12}\ntimeout: 30s\n"
	d := start(t, newDir(t, map[string]string{"matmulcuda.yaml": spec}))
	cfg := waitServedKernel(t, d, "matmulcuda", "1024")
	if len(cfg.Config) != 3 || cfg.Certificate == "" || !strings.HasPrefix(cfg.Device, "nvidia/") {
		t.Fatalf("served %+v", cfg)
	}
	t.Logf("served %s (%.3f ms on %s, certificate %s)", cfg.Key, cfg.TimeMS, cfg.Device, cfg.Certificate)
}

// A device class change (a new driver, say) makes new jobs: their first
// cycle is a "device-change" re-tune, warm-started from the old device's
// trials, and the new device gets its own certified config.
func TestDeviceChange(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "fakeharness")
	if out, err := exec.Command("go", "build", "-o", bin, "../../evaluate/harness/testdata/fakeharness").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	spec := "name: fake\nevaluator: exec:" + bin + "\nproblems: [\"64\"]\nschedule: \"@every 1h\"\nbudget: {evals: 8}\ntimeout: 300ms\n"
	dir := newDir(t, map[string]string{"fake.yaml": spec})
	d := startWith(t, dir, withEnv("FAKE_DEVICE=gpu/driver-1"))
	old := waitServedKernel(t, d, "fake", "64")
	d.stop()
	d = startWith(t, dir, withEnv("FAKE_DEVICE=gpu/driver-2"))
	cfg := waitServedKernel(t, d, "fake", "64")
	if cfg.Device != "gpu/driver-2" || old.Device != "gpu/driver-1" || cfg.Certificate == old.Certificate {
		t.Fatalf("before %+v, after %+v", old, cfg)
	}
	var cycles api.Cycles
	d.ctlJSON(&cycles, "cycles", "fake")
	found := false
	for _, c := range cycles.Cycles {
		found = found || (c.Device == "gpu/driver-2" && c.Trigger == "device-change")
	}
	if !found {
		t.Errorf("no device-change cycle: %+v", cycles.Cycles)
	}
	if !strings.Contains(d.stderr.String(), `"message":"warm start"`) {
		t.Errorf("the new device's job was not warm-started from the old one's trials")
	}
}

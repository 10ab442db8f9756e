package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/testload"
)

var (
	binDir string
	// The binaries are built by the first test that needs them; the
	// others, running in parallel, wait for that build.
	buildMu  sync.Mutex
	built    bool
	buildErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "quasimd-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binaries builds quasimd and quasimctl once per test run.
func binaries(t testing.TB) (quasimd, quasimctl string) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: builds and runs the real binaries")
	}
	quasimd, quasimctl = filepath.Join(binDir, "quasimd"), filepath.Join(binDir, "quasimctl")
	buildMu.Lock()
	defer buildMu.Unlock()
	if !built {
		built = true
		for _, b := range [][2]string{{quasimd, "."}, {quasimctl, "../quasimctl"}} {
			if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				break
			}
		}
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return
}

// withEnv is a startWith hook that adds vars to the daemon's environment
// (and so to the harnesses it runs), where os.Setenv would reach the
// tests running in parallel.
func withEnv(vars ...string) func(string, *exec.Cmd) {
	return func(_ string, cmd *exec.Cmd) { cmd.Env = append(cmd.Env, vars...) }
}

// proc is a running quasimd.
type proc struct {
	t        testing.TB
	cmd      *exec.Cmd
	dir      string
	socket   string
	notify   *net.UnixConn
	stderr   *bytes.Buffer
	exited   chan error
	quasimd  string
	quasimct string
}

func newDir(t testing.TB, specs map[string]string) string {
	dir := t.TempDir()
	kd := filepath.Join(dir, "kernels.d")
	if err := os.MkdirAll(kd, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range specs {
		if err := os.WriteFile(filepath.Join(kd, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// start runs quasimd on dir's state and specs and waits for READY=1.
func start(t testing.TB, dir string, extra ...string) *proc {
	t.Helper()
	return startWith(t, dir, nil, extra...)
}

// startWith is start with a hook that sees the socket's directory (which
// holds the lock directory, locks/) and the command before it starts.
func startWith(t testing.TB, dir string, hook func(sockDir string, cmd *exec.Cmd), extra ...string) *proc {
	t.Helper()
	qd, qc := binaries(t)
	// Socket paths are limited to 108 bytes: keep them short.
	sockDir, err := os.MkdirTemp("", "qs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	d := &proc{t: t, dir: dir, socket: filepath.Join(sockDir, "q.sock"), stderr: &bytes.Buffer{}, exited: make(chan error, 1), quasimd: qd, quasimct: qc}
	nsock := filepath.Join(sockDir, "notify")
	d.notify, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: nsock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.notify.Close() })
	args := append([]string{"--socket", d.socket, "--state-dir", filepath.Join(dir, "state"), "--kernels", filepath.Join(dir, "kernels.d"), "--log-level", "debug",
		// Other test packages load the CPU; only the idle test gates on it.
		"--idle-cpu", "0", "--lock-dir", filepath.Join(sockDir, "locks"),
		// A second of every core per daemon would slow the other tests;
		// TestCeilings measures them.
		"--no-ceilings"}, extra...)
	d.cmd = exec.Command(qd, args...)
	d.cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+nsock)
	d.cmd.Stderr = d.stderr
	if hook != nil {
		hook(sockDir, d.cmd)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.cmd.Process.Kill()
			<-d.exited
		}
		if t.Failed() {
			// Without the debug lines of each request: a test that polls
			// fills the tail with them.
			var keep []string
			for _, l := range strings.Split(d.stderr.String(), "\n") {
				if !strings.Contains(l, `"message":"request"`) {
					keep = append(keep, l)
				}
			}
			t.Logf("quasimd log:\n%s", tail(strings.Join(keep, "\n"), 8000))
		}
	})
	if msg := d.readNotify(30 * time.Second); msg != "READY=1" {
		t.Fatalf("first sd_notify message %q, want READY=1; log:\n%s", msg, d.stderr.String())
	}
	return d
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func (d *proc) readNotify(timeout time.Duration) string {
	buf := make([]byte, 256)
	d.notify.SetReadDeadline(time.Now().Add(testload.Scale(timeout)))
	n, err := d.notify.Read(buf)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(buf[:n])
}

// ctl runs quasimctl against the daemon and returns stdout, stderr and the exit code.
func (d *proc) ctl(args ...string) (string, string, int) {
	d.t.Helper()
	cmd := exec.Command(d.quasimct, append([]string{"--socket", d.socket}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		d.t.Fatalf("quasimctl %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func (d *proc) ctlJSON(v any, args ...string) {
	d.t.Helper()
	out, errs, code := d.ctl(append(args, "--json")...)
	if code != 0 {
		d.t.Fatalf("quasimctl %v: exit %d: %s", args, code, errs)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		d.t.Fatalf("quasimctl %v: bad JSON %v:\n%s", args, err, out)
	}
}

// stop sends SIGTERM and requires exit code 0 within 10 s.
func (d *proc) stop() {
	d.t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.exited:
		if err != nil {
			d.t.Fatalf("quasimd exited with %v after SIGTERM; log:\n%s", err, tail(d.stderr.String(), 4000))
		}
	case <-time.After(testload.Scale(10 * time.Second)):
		d.t.Fatalf("quasimd still running 10 s after SIGTERM")
	}
}

func (d *proc) kill() {
	d.cmd.Process.Kill()
	<-d.exited
}

// rawGet sends one HTTP/1.1 request by hand on the socket.
func (d *proc) rawGet(path string) (int, []byte) {
	d.t.Helper()
	c, err := net.Dial("unix", d.socket)
	if err != nil {
		d.t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: quasimd\r\nConnection: close\r\n\r\n", path)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

const sgemmSpec = `name: sgemm
evaluator: builtin:sgemm
problems: ["256,256,256", "128,128,128"]
schedule: "@every 1h"
budget: {evals: 6}
`

func TestDaemonEndToEnd(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{"sgemm.yaml": sgemmSpec})
	d := start(t, dir)

	out, errs, code := d.ctl("tune", "sgemm", "--problem", "256,256,256", "--budget", "20", "--wait")
	if code != 0 {
		t.Fatalf("tune --wait: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "evals") {
		t.Errorf("tune --wait showed no progress on stderr: %q", errs)
	}
	var cfg api.Config
	d.ctlJSON(&cfg, "config", "sgemm", "--problem", "256,256,256")
	var trials api.Trials
	d.ctlJSON(&trials, "trials", "sgemm", "--problem", "256,256,256")
	best := api.Trial{}
	for _, tr := range trials.Trials {
		if tr.Status == "ok" && (best.Key == "" || tr.TimeMS < best.TimeMS) {
			best = tr
		}
	}
	if len(trials.Trials) < 20 {
		t.Errorf("%d trials stored, want at least the 20 of the tune", len(trials.Trials))
	}
	if cfg.Match != api.MatchExact || cfg.Key != best.Key || cfg.Trial == nil || cfg.Trial.TimeMS != best.TimeMS || len(cfg.Config) != 8 {
		t.Fatalf("config = %+v, want the best stored trial %s %.4f ms", cfg, best.Key, best.TimeMS)
	}
	// Served at its certificate's median, inside that median's interval,
	// with a paired speed-up over the default; the search's time stays in
	// the trial.
	if !(cfg.TimeCILowMS <= cfg.TimeMS && cfg.TimeMS <= cfg.TimeCIHighMS) || cfg.Speedup == nil || !(cfg.Speedup.Low <= cfg.Speedup.Ratio && cfg.Speedup.Ratio <= cfg.Speedup.High) {
		t.Errorf("config time %v ms (CI %v to %v), speed-up %+v: want the certificate's median inside its interval and a paired speed-up", cfg.TimeMS, cfg.TimeCILowMS, cfg.TimeCIHighMS, cfg.Speedup)
	}
	var cycles api.Cycles
	d.ctlJSON(&cycles, "cycles", "sgemm")
	sawAPI := false
	for _, c := range cycles.Cycles {
		if c.Trigger == "api" && c.State == "done" && c.Evals == 20 {
			sawAPI = true
		}
	}
	if !sawAPI {
		t.Errorf("no finished 20-evaluation api cycle in %+v", cycles.Cycles)
	}

	// The same query as a hand-written HTTP request on the socket.
	status, body := d.rawGet("/v1/configs/sgemm?problem=256,256,256")
	var raw api.Config
	if err := json.Unmarshal(body, &raw); status != 200 || err != nil || raw.Key != cfg.Key || raw.TimeMS != cfg.TimeMS {
		t.Fatalf("raw GET: %d %s", status, body)
	}
	// Bad requests get JSON errors with the right status.
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/v1/configs/sgemm?problem=abc", 400},
		{"/v1/configs/nosuch", 404},
		{"/v1/nothing", 404},
	} {
		status, body := d.rawGet(tc.path)
		var e api.Error
		if status != tc.code || json.Unmarshal(body, &e) != nil || e.Error == "" || e.Code == "" {
			t.Errorf("GET %s = %d %s, want %d with a JSON error", tc.path, status, body, tc.code)
		}
	}

	d.stop()
	if msg := d.readNotify(time.Second); msg != "STOPPING=1" {
		t.Errorf("sd_notify after SIGTERM = %q, want STOPPING=1", msg)
	}

	// Restart: everything is still there.
	d2 := start(t, dir)
	var cfg2 api.Config
	d2.ctlJSON(&cfg2, "config", "sgemm", "--problem", "256,256,256")
	var trials2 api.Trials
	d2.ctlJSON(&trials2, "trials", "sgemm", "--problem", "256,256,256")
	if cfg2.Key != cfg.Key || cfg2.TimeMS != cfg.TimeMS {
		t.Errorf("served config after restart = %s %.4f, want %s %.4f", cfg2.Key, cfg2.TimeMS, cfg.Key, cfg.TimeMS)
	}
	if len(trials2.Trials) < len(trials.Trials) {
		t.Errorf("%d trials after restart, %d before", len(trials2.Trials), len(trials.Trials))
	}
	d2.stop()
}

func TestSecondDaemonFailsFast(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{"sgemm.yaml": sgemmSpec})
	d := start(t, dir)
	qd, _ := binaries(t)
	sock := filepath.Join(filepath.Dir(d.socket), "other.sock")
	cmd := exec.Command(qd, "--socket", sock, "--state-dir", filepath.Join(dir, "state"), "--kernels", filepath.Join(dir, "kernels.d"))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "another") {
		t.Errorf("second quasimd: %v after %s: %s", err, time.Since(t0), errb.String())
	}
	if time.Since(t0) > 8*time.Second {
		t.Errorf("second quasimd took %s to fail", time.Since(t0))
	}
	d.stop()
}

func TestBadSpecsDoNotStopOthers(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{
		"sgemm.yaml":    sgemmSpec,
		"broken.yaml":   "name: [unclosed\n",
		"cron.yaml":     "name: c1\nevaluator: builtin:reduce\nschedule: \"every day\"\n",
		"eval.yaml":     "name: c2\nevaluator: gpu:magic\n",
		"expr.yaml":     "name: c3\nevaluator: builtin:reduce\nconstraints: [\"block +\"]\n",
		"notaspec.json": "{\"hello\": 1}",
	})
	d := start(t, dir)
	st := d.unhealthy()
	joined := strings.Join(st.SpecError, "\n")
	for _, want := range []string{"broken.yaml", "cron.yaml", "schedule", "eval.yaml", "evaluator", "expr.yaml", "constraints"} {
		if !strings.Contains(joined, want) {
			t.Errorf("spec errors do not mention %q:\n%s", want, joined)
		}
	}
	if st.Kernels != 1 {
		t.Errorf("%d kernels loaded, want sgemm alone", st.Kernels)
	}
	// sgemm is still tuned and served.
	if out, errs, code := d.ctl("tune", "sgemm", "--problem", "128,128,128", "--budget", "4", "--wait"); code != 0 {
		t.Fatalf("tune: %d %s %s", code, out, errs)
	}
	var cfg api.Config
	d.ctlJSON(&cfg, "config", "sgemm", "--problem", "128,128,128")
	if cfg.Match != api.MatchExact {
		t.Errorf("sgemm config match %q, want exact", cfg.Match)
	}
	// Reload picks up a fixed spec without a restart.
	os.WriteFile(filepath.Join(dir, "kernels.d", "cron.yaml"), []byte("name: c1\nevaluator: builtin:reduce\nschedule: \"@every 2h\"\nbudget: {evals: 2}\n"), 0o644)
	// The other bad files still do not load: reload says so and exits 6.
	var rr api.ReloadResponse
	out, errs, code := d.ctl("reload", "--json")
	if err := json.Unmarshal([]byte(out), &rr); err != nil || code != 6 || !strings.Contains(errs, "did not load") {
		t.Errorf("reload with bad spec files left: exit %d, %v: %s", code, err, errs)
	}
	if rr.Kernels != 2 || len(rr.Errors) == 0 {
		t.Errorf("after reload: %d kernels, want 2 (%v)", rr.Kernels, rr.Errors)
	}
	d.stop()
}

// TestCrashSafety kills quasimd with SIGKILL at random moments during
// cycles; every committed trial must survive, the store must check clean,
// and the job must resume and finish.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	kills := 20
	if os.Getenv("QUASIM_CRASH_KILLS") != "" {
		fmt.Sscan(os.Getenv("QUASIM_CRASH_KILLS"), &kills)
	}
	const budget = 200
	dir := newDir(t, map[string]string{"reduce.yaml": fmt.Sprintf(`name: reduce
evaluator: builtin:reduce
problems: ["4194304"]
schedule: "@every 24h"
budget: {evals: %d}
`, budget)})
	rng := rand.New(rand.NewPCG(42, uint64(time.Now().UnixNano())))
	t0 := time.Now()
	committed := map[string]bool{}
	// A kill comes at a random moment after 1 to 3 new trials were
	// committed: moments tied to the daemon's progress, not to the clock,
	// so that neither a slow start under load nor a fast machine lets one
	// generation run the whole cycle (a clock-timed life did both: kills
	// that found nothing new, then one that found the cycle done).
	// during: kills while the cycle ran; running: kills before it was done.
	during, running := 0, 0
	for i := range kills {
		d := start(t, dir)
		want := 1 + rng.IntN(3)
		var trials api.Trials
		var cycles api.Cycles
		deadline := time.Now().Add(testload.Scale(20 * time.Second))
		for {
			d.ctlJSON(&trials, "trials", "reduce")
			d.ctlJSON(&cycles, "cycles", "reduce")
			fresh := 0
			for _, tr := range trials.Trials {
				if !committed[tr.Key] {
					fresh++
				}
			}
			n := len(cycles.Cycles)
			if fresh >= want || (n > 0 && cycles.Cycles[n-1].State == "done") || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
		d.kill()
		for _, tr := range trials.Trials {
			committed[tr.Key] = true
		}
		if n := len(cycles.Cycles); n == 0 || cycles.Cycles[n-1].State != "done" {
			running++
			if n > 0 && cycles.Cycles[n-1].State == "running" {
				during++
			}
		}
		t.Logf("kill %d: %d trials committed so far", i+1, len(committed))
	}
	// Kills before the cycle is done must mostly hit it running, not the
	// daemon starting, and at least 10 of them must (a soak of more kills
	// than the cycle has evaluations for goes on killing the daemon idle).
	if during < running/2 || during < min(kills, 20)/2 {
		t.Errorf("only %d of %d kills hit a running cycle (%d came before it was done)", during, kills, running)
	}
	// Let it finish.
	d := start(t, dir)
	deadline := time.Now().Add(testload.Scale(3 * time.Minute))
	var cycles api.Cycles
	for time.Now().Before(deadline) {
		d.ctlJSON(&cycles, "cycles", "reduce")
		if n := len(cycles.Cycles); n > 0 && cycles.Cycles[n-1].State == "done" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var trials api.Trials
	d.ctlJSON(&trials, "trials", "reduce")
	d.stop()
	n := len(cycles.Cycles)
	if n != 1 || cycles.Cycles[0].State != "done" || cycles.Cycles[0].Evals != budget {
		t.Fatalf("cycles after the kills: %+v; want one done cycle of %d evaluations", cycles.Cycles, budget)
	}
	have := map[string]bool{}
	twice := 0
	for _, tr := range trials.Trials {
		if have[tr.Key] {
			t.Errorf("trial %s stored twice", tr.Key)
			twice++
		}
		have[tr.Key] = true
	}
	lost := 0
	for k := range committed {
		if !have[k] {
			t.Errorf("committed trial %s lost", k)
			lost++
		}
	}
	if len(have) != budget {
		t.Errorf("%d trials, want %d", len(have), budget)
	}
	st, err := store.Open(filepath.Join(dir, "state", "quasim.db"), store.Options{ReadOnly: true, LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	check := "clean"
	if err := st.Check(); err != nil {
		t.Errorf("store check: %v", err)
		check = err.Error()
	}
	// The figures of docs/evidence/reliability.md's table.
	t.Logf("%d kills (%d before the cycle was done, %d of them while it ran): %d committed trials seen before the kills, %d lost, %d stored twice; bbolt check %s; cycles %d, finished %d/%d evaluations (%s); wall %s",
		kills, running, during, len(committed), lost, twice, check, n, cycles.Cycles[0].Evals, budget, cycles.Cycles[0].State, time.Since(t0).Round(time.Second))
}

func TestUnauthorizedWrite(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("skipping: needs root to connect as another uid")
	}
	dir := newDir(t, map[string]string{"sgemm.yaml": sgemmSpec})
	d := start(t, dir)
	// nobody must reach the binary and the socket.
	os.Chmod(filepath.Dir(d.socket), 0o755)
	os.Chmod(binDir, 0o755)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(d.quasimct, append([]string{"--socket", d.socket}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return errb.String(), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return errb.String(), 0
	}
	if errs, code := run("config", "sgemm", "--problem", "128,128,128"); code != 0 {
		t.Errorf("read as nobody: exit %d %s", code, errs)
	}
	if errs, code := run("tune", "sgemm", "--problem", "128,128,128", "--budget", "1"); code != 5 || !strings.Contains(errs, "permission") {
		t.Errorf("tune as nobody: exit %d %q, want 5 permission denied", code, errs)
	}
	if errs, code := run("reload"); code != 5 {
		t.Errorf("reload as nobody: exit %d %q, want 5", code, errs)
	}
	d.stop()
}

// BenchmarkIdleRSS reports the resident memory of a started daemon that has
// nothing to tune (a bare FAIR T1 kernel: listed and served, never tuned),
// and the part of it that is anonymous memory.
//
//	go test ./cmd/quasimd -run '^$' -bench IdleRSS -benchtime 1x
func BenchmarkIdleRSS(b *testing.B) {
	t1 := filepath.Join("..", "..", "..", "shared", "spaces", "kernels", "convolution_milo.T1.json")
	data, err := os.ReadFile(t1)
	if err != nil {
		b.Skipf("skipping: %v (the shared spaces sit beside the checkout)", err)
	}
	dir := newDir(b, map[string]string{"convolution_milo.json": string(data)})
	for range b.N {
		d := start(b, dir)
		time.Sleep(2 * time.Second)
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
		if err != nil {
			b.Skipf("skipping: %v", err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			var kb float64
			if _, err := fmt.Sscanf(line, "VmRSS: %f kB", &kb); err == nil {
				b.ReportMetric(kb/1024, "rss_MiB")
			}
			// The daemon's own memory (heap, stacks); the rest of the RSS
			// is pages of the binary, which the kernel may drop.
			if _, err := fmt.Sscanf(line, "RssAnon: %f kB", &kb); err == nil {
				b.ReportMetric(kb/1024, "anon_MiB")
			}
		}
		d.stop()
	}
	b.ReportMetric(0, "ns/op")
}

func TestCertificates(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{"sgemm.yaml": `name: sgemm
evaluator: builtin:sgemm
problems: ["128,128,128"]
schedule: "@every 1h"
budget: {evals: 8}
`})
	d := start(t, dir)
	if out, errs, code := d.ctl("tune", "sgemm", "--problem", "128,128,128", "--budget", "8", "--wait"); code != 0 {
		t.Fatalf("tune: %d %s %s", code, out, errs)
	}
	var cfg api.Config
	d.ctlJSON(&cfg, "config", "sgemm", "--problem", "128,128,128")
	if cfg.Certificate == "" || cfg.Match != api.MatchExact {
		t.Fatalf("served config has no certificate: %+v", cfg)
	}
	if out, errs, code := d.ctl("certs", "verify", cfg.Certificate); code != 0 || !strings.Contains(out, "PASS") {
		t.Fatalf("certs verify %s: exit %d\n%s\n%s", cfg.Certificate, code, out, errs)
	}
	if out, _, code := d.ctl("certs", "show", cfg.Certificate); code != 0 || !strings.Contains(out, "parity") || !strings.Contains(out, "error_bound") {
		t.Errorf("certs show: exit %d\n%s", code, out)
	}

	// Offline: the exported certificate and the public key verify with no daemon.
	body, errs, code := d.ctl("certs", "show", cfg.Certificate, "--json")
	if code != 0 {
		t.Fatalf("certs show --json: %d %s", code, errs)
	}
	pub, _, _ := d.ctl("certs", "pubkey")
	certFile, keyFile := filepath.Join(dir, "cert.json"), filepath.Join(dir, "key.pub")
	os.WriteFile(certFile, []byte(body), 0o644)
	os.WriteFile(keyFile, []byte(pub), 0o644)
	offline := func() (string, int) {
		cmd := exec.Command(d.quasimct, "--socket", "/nonexistent/sock", "certs", "verify", "--file", certFile, "--pubkey", keyFile)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := offline(); code != 0 {
		t.Fatalf("offline verify of the exported certificate: exit %d\n%s", code, out)
	}
	flip := func(what string, pos int) {
		b := []byte(body)
		if b[pos] == 'a' {
			b[pos] = 'b'
		} else if b[pos] >= '0' && b[pos] <= '8' {
			b[pos]++
		} else {
			b[pos] = 'a'
		}
		os.WriteFile(certFile, b, 0o644)
		out, code := offline()
		if code == 0 || !strings.Contains(out, "verify") {
			t.Errorf("offline verify with a byte of the %s flipped: exit %d, %q; want a failure saying what failed", what, code, out)
		}
	}
	flip("signature", strings.Index(body, `"signature":"`)+len(`"signature":"`)+3)
	flip("kernel name", strings.Index(body, `"kernel":"sgemm"`)+len(`"kernel":"`))
	flip("latency", strings.Index(body, `"median_ms":`)+len(`"median_ms":`)+2)

	// Revocation: the config query no longer returns it.
	if out, errs, code := d.ctl("certs", "revoke", cfg.Certificate, "--reason", "test revocation"); code != 0 {
		t.Fatalf("revoke: %d %s %s", code, out, errs)
	}
	var after api.Config
	d.ctlJSON(&after, "config", "sgemm", "--problem", "128,128,128")
	if after.Certificate == cfg.Certificate || (after.Match == api.MatchExact && after.Key == cfg.Key) {
		t.Errorf("after revoking %s the config answer is %+v", cfg.Certificate, after)
	}
	if _, _, code := d.ctl("certs", "verify", cfg.Certificate); code == 0 {
		t.Errorf("online verify of a revoked certificate exited 0")
	}
	d.stop()
}

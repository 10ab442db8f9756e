package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/internal/testload"
)

// asUser runs cmd as nobody (65534) with only the environment given: no
// QUASIM_SOCKET and a runtime dir where no daemon of their own listens.
func asUser(t *testing.T, cmd *exec.Cmd, env ...string) (string, error) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "XDG_RUNTIME_DIR=/nonexistent/run"}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// Ordinary users find the daemon run as a service on its system socket,
// with no flag or environment, from quasimctl and the Go, C and Python
// runtimes, and report observations (any local uid may, rate-limited per
// uid); tuning stays privileged. The daemon's socket stands for
// /run/quasim/quasimd.sock: each client is built with it as the system
// socket, as a distribution that moves /run would build them.
func TestRuntimesAsUser(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("skipping: needs root to run clients as another uid")
	}
	d := start(t, newDir(t, map[string]string{"reduce.yaml": reduceSpec}), "--observe-rate", "0.01", "--observe-burst", "12")
	waitServed(t, d, "65536")
	os.Chmod(filepath.Dir(d.socket), 0o755)
	bin, err := os.MkdirTemp("", "qu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	os.Chmod(bin, 0o755)
	ldflags := "-X github.com/quasim/quasim/client.systemSocket=" + d.socket

	// quasimctl reads; tune is refused.
	ctl := filepath.Join(bin, "quasimctl")
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", ctl, "../quasimctl").CombinedOutput(); err != nil {
		t.Fatalf("go build quasimctl: %v\n%s", err, out)
	}
	out, err := asUser(t, exec.Command(ctl, "config", "reduce", "--problem", "65536", "--json"))
	if err != nil || !strings.Contains(out, `"match": "exact"`) {
		t.Errorf("quasimctl config as nobody: %v\n%s", err, out)
	}
	out, err = asUser(t, exec.Command(ctl, "tune", "reduce", "--problem", "65536", "--budget", "1"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 || !strings.Contains(out, "permission") {
		t.Errorf("quasimctl tune as nobody: %v\n%s; want exit 5, permission denied", err, out)
	}

	// The Go runtime: lookup, report, report for a job that does not exist.
	rt := filepath.Join(bin, "lookupuser")
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", rt, "./testdata/lookupuser").CombinedOutput(); err != nil {
		t.Fatalf("go build lookupuser: %v\n%s", err, out)
	}
	if out, err := asUser(t, exec.Command(rt)); err != nil {
		t.Errorf("Go runtime as nobody: %v\n%s", err, out)
	} else {
		t.Logf("Go runtime as nobody:\n%s", out)
	}
	// The same with $QUASIM_SOCKET: reports are accepted from nobody.
	if out, err := asUser(t, exec.Command(rt), "QUASIM_SOCKET="+d.socket); err != nil {
		t.Errorf("Go runtime as nobody with $QUASIM_SOCKET: %v\n%s", err, out)
	}

	// The C client, built with the daemon's socket as the system one.
	cbin := cc(t, bin, "test_quasim.c", `-DQUASIM_SYSTEM_SOCKET="`+d.socket+`"`)
	if out, err := asUser(t, exec.Command(cbin, "")); err != nil {
		t.Errorf("C client as nobody: %v\n%s", err, out)
	} else if n := strings.Count(out, "quasim: quasimd could not answer"); n != 2 {
		// one line per outage: the unknown kernel, then the missing daemon
		t.Errorf("C client wrote %d fallback lines, want 2:\n%s", n, out)
	} else {
		t.Logf("C client as nobody:\n%s", out)
	}

	// The Python client.
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Log("no /usr/bin/python3: the Python client is not run as nobody here")
	} else {
		cmd := exec.Command("/usr/bin/python3", "-m", "unittest", "-v", "test_quasim_client.AsUser")
		cmd.Dir = filepath.Join("..", "..", "runtime", "python")
		out, err := asUser(t, cmd, "QUASIM_TEST_SYSTEM_SOCKET="+d.socket, "PYTHONDONTWRITEBYTECODE=1")
		if err != nil || strings.Contains(out, "skipped") {
			t.Errorf("Python client as nobody: %v\n%s", err, out)
		} else {
			t.Logf("Python client as nobody:\n%s", out)
		}
	}

	// nobody has spent 6 of its 12 tokens (4 by Go, 2 by Python); flooding
	// meets 429 after the rest, and root's own bucket is untouched.
	out, err = asUser(t, exec.Command(rt, "-flood", "50"))
	if err != nil || !strings.Contains(out, "rate-limited after 6 reports") || !strings.Contains(out, "uid 65534") {
		t.Errorf("flood as nobody: %v\n%s; want rate-limited after the 6 tokens left", err, out)
	}
	c := &client.Client{Socket: d.socket}
	var cfg api.Config
	d.ctlJSON(&cfg, "config", "reduce", "--problem", "65536")
	if _, err := c.Observe(context.Background(), api.ObservationsRequest{Observations: []api.Observation{{Kernel: "reduce", Problem: "65536", Key: cfg.Key, LatenciesMS: []float64{0.5}}}}); err != nil {
		t.Errorf("root's report after nobody's flood: %v", err)
	}
	d.stop()
}

// cpuSeconds is the user and system CPU time process pid has used.
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command, which is in parentheses: state is the
	// first, utime the 12th and stime the 13th.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

// SIGTERM while a long measurement runs (sgemm at 4096³, one run tens of
// seconds here) stops the daemon at once, cleanly: the run is interrupted,
// the cycle is interrupted, exit code 0, well within the
// unit's TimeoutStopSec (30 s). Before runs stopped between repetitions
// only, it waited out --shutdown-timeout and exited 1.
func TestSigtermDuringLongMeasurement(t *testing.T) {
	t.Parallel()
	spec := "name: big\nevaluator: builtin:sgemm\nproblems: [\"4096,4096,4096\"]\nschedule: \"@every 1h\"\nbudget: {evals: 2}\n"
	dir := newDir(t, map[string]string{"big.yaml": spec})
	d := start(t, dir)
	// Inputs take about a second of CPU, one run of any config far more
	// than 4: once the daemon has used 4 s of CPU, a run is in progress.
	deadline := time.Now().Add(testload.Scale(3 * time.Minute))
	for cpuSeconds(t, d.cmd.Process.Pid) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("quasimd used under 4 s of CPU in 3 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var cy api.Cycles
	d.ctlJSON(&cy, "cycles", "big")
	if len(cy.Cycles) != 1 || cy.Cycles[0].State != "running" || cy.Cycles[0].Evals != 0 {
		t.Fatalf("cycles = %+v, want the first one running, no evaluation done", cy.Cycles)
	}
	t0 := time.Now()
	d.stop() // SIGTERM; requires exit 0 within 10 s
	took := time.Since(t0)
	t.Logf("SIGTERM during a measurement of sgemm 4096³: exited in %s", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("SIGTERM took %s, want well under the unit's TimeoutStopSec of 30s", took)
	}
	if !strings.Contains(d.stderr.String(), `"state":"interrupted"`) && !strings.Contains(d.stderr.String(), "interrupted") {
		t.Errorf("the log does not say the cycle was interrupted")
	}
}

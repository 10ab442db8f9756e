package main

import (
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/testload"
)

// spin loads every CPU with busy-looping processes outside quasimd until
// the returned func (also run at cleanup) stops them.
func spin(t *testing.T) func() {
	var procs []*exec.Cmd
	for range runtime.NumCPU() {
		p := exec.Command("sh", "-c", "while :; do :; done")
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	stop := func() {
		for _, p := range procs {
			p.Process.Kill()
			p.Wait()
		}
		procs = nil
	}
	t.Cleanup(stop)
	return stop
}

// TestIdleGating loads every CPU with busy-looping processes outside
// quasimd: its cycle waits for the load to go, says why in its record, and
// is skipped when the load outlasts --idle-wait. Not parallel: the load
// would slow every test beside it.
func TestIdleGating(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every CPU for several seconds")
	}
	spin(t)
	dir := newDir(t, map[string]string{"reduce.yaml": reduceSpec})
	d := start(t, dir, "--idle-cpu", "0.3", "--idle-wait", "3s", "--idle-poll", "200ms")
	var cy api.Cycle
	sawWaiting, statusWaiting := false, false
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for time.Now().Before(deadline) {
		var cycles api.Cycles
		d.ctlJSON(&cycles, "cycles", "reduce")
		if len(cycles.Cycles) > 0 {
			cy = cycles.Cycles[0]
			sawWaiting = sawWaiting || cy.State == "waiting"
			if cy.State == "waiting" && !statusWaiting {
				// status counts it waiting, not running.
				var st api.Status
				d.ctlJSON(&st, "status")
				statusWaiting = len(st.Waiting) == 1 && len(st.Running) == 0
				if len(st.Running)+len(st.Waiting) > 0 && !statusWaiting {
					t.Errorf("status while the cycle waits: running %v, waiting %v; want it waiting", st.Running, st.Waiting)
				}
			}
			if cy.State != "running" && cy.State != "waiting" {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cy.State != "skipped" || cy.Evals != 0 || cy.WaitedS < 3 || !strings.Contains(cy.Busy, "CPU load of other processes") {
		t.Fatalf("cycle under load = %+v; want skipped after waiting 3s, with the reason", cy)
	}
	if !sawWaiting || !statusWaiting {
		t.Errorf("the cycle was never seen waiting (cycles: %v, status: %v)", sawWaiting, statusWaiting)
	}
	out, _, _ := d.ctl("cycles", "reduce")
	if !strings.Contains(out, "skipped") || !strings.Contains(out, "device busy: CPU load") {
		t.Errorf("quasimctl cycles does not show the wait:\n%s", out)
	}
	t.Logf("cycle record: state %s, waited %.1fs, busy %q", cy.State, cy.WaitedS, cy.Busy)
}

// tune --wait follows a cycle that waits for an idle device: it says so
// on stderr and waits with it; when the device stays busy past
// --idle-wait and the cycle is skipped, it exits 1 saying why. (That the
// wait goes on to a finished cycle once the load goes is tested against a
// scripted daemon in cmd/quasimctl/cli: other work on a shared machine
// would make it flaky here.) Not parallel, as TestIdleGating.
func TestTuneWaitBusyDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every CPU for several seconds")
	}
	dir := newDir(t, map[string]string{"reduce.yaml": reduceSpec})
	// Served first with the gate off, so no start cycle waits later.
	d := start(t, dir)
	waitServed(t, d, "65536")
	d.stop()
	d = start(t, dir, "--idle-cpu", "0.3", "--idle-wait", "3s", "--idle-poll", "200ms")
	spin(t)
	// The gate samples once a second: wait until it sees the load.
	loadRE := regexp.MustCompile(`(?m)^quasim_cpu_load_others ([0-9.e+-]+)$`)
	deadline := time.Now().Add(testload.Scale(30 * time.Second))
	for {
		_, body := d.rawGet("/metrics")
		if m := loadRE.FindSubmatch(body); m != nil {
			if v, _ := strconv.ParseFloat(string(m[1]), 64); v > 0.3 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle gate never saw the load:\n%s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t0 := time.Now()
	out, errs, code := d.ctl("tune", "reduce", "--budget", "3", "--wait", "--poll", "100ms", "--timeout", "2m")
	took := time.Since(t0)
	if code != 1 {
		t.Fatalf("tune --wait on a busy device = exit %d after %s, want 1\nstdout:\n%s\nstderr:\n%s", code, took, out, errs)
	}
	if !strings.Contains(errs, "waiting for an idle device (CPU load of other processes") ||
		!regexp.MustCompile(`quasimctl: tune reduce: cycle \d+ \(65536\) skipped: device busy: CPU load of other processes`).MatchString(errs) {
		t.Errorf("tune --wait stderr does not show the wait and why the cycle was skipped:\n%s", errs)
	}
	if !strings.Contains(out, "skipped") {
		t.Errorf("tune --wait result does not show the cycle skipped:\n%s", out)
	}
	if took < 3*time.Second {
		t.Errorf("tune --wait returned after %s, before the cycle could have waited --idle-wait 3s", took)
	}
	t.Logf("tune --wait on a busy device, %s:\n%s", took.Round(time.Millisecond), errs)
}

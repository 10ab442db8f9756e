package main

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
)

// TestIdleGating loads every CPU with busy-looping processes outside
// quasimd: its cycle waits for the load to go, says why in its record, and
// is skipped when the load outlasts --idle-wait.
func TestIdleGating(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every CPU for several seconds")
	}
	for range runtime.NumCPU() {
		spin := exec.Command("sh", "-c", "while :; do :; done")
		if err := spin.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { spin.Process.Kill(); spin.Wait() })
	}
	dir := newDir(t, map[string]string{"reduce.yaml": reduceSpec})
	d := start(t, dir, "--idle-cpu", "0.3", "--idle-wait", "3s", "--idle-poll", "200ms")
	var cy api.Cycle
	sawWaiting := false
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var cycles api.Cycles
		d.ctlJSON(&cycles, "cycles", "reduce")
		if len(cycles.Cycles) > 0 {
			cy = cycles.Cycles[0]
			sawWaiting = sawWaiting || cy.State == "waiting"
			if cy.State != "running" && cy.State != "waiting" {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cy.State != "skipped" || cy.Evals != 0 || cy.WaitedS < 3 || !strings.Contains(cy.Busy, "CPU load of other processes") {
		t.Fatalf("cycle under load = %+v; want skipped after waiting 3s, with the reason", cy)
	}
	if !sawWaiting {
		t.Errorf("the cycle was never seen waiting")
	}
	out, _, _ := d.ctl("cycles", "reduce")
	if !strings.Contains(out, "skipped") || !strings.Contains(out, "device busy: CPU load") {
		t.Errorf("quasimctl cycles does not show the wait:\n%s", out)
	}
	t.Logf("cycle record: state %s, waited %.1fs, busy %q", cy.State, cy.WaitedS, cy.Busy)
}

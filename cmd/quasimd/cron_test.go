package main

import (
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/testload"
)

// A spec's schedule fires cycles by itself: with "@every 1s", after the
// first cycle (trigger "start") the daemon runs cycles recorded with the
// trigger "cron", and each ends done.
func TestCronCycle(t *testing.T) {
	t.Parallel()
	spec := strings.Replace(reduceSpec, `schedule: "@every 1h"`, `schedule: "@every 1s"`, 1)
	if spec == reduceSpec {
		t.Fatal("reduceSpec has no hourly schedule to replace")
	}
	d := start(t, newDir(t, map[string]string{"reduce.yaml": spec}))
	var cycles api.Cycles
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		d.ctlJSON(&cycles, "cycles", "reduce")
		done := 0
		for _, cy := range cycles.Cycles {
			if cy.Trigger == "cron" && cy.State == "done" {
				done++
			}
		}
		if done >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 2 cron cycles done within 60s: %+v", cycles.Cycles)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if first := cycles.Cycles[0]; first.ID != 1 || first.Trigger != "start" {
		t.Errorf("first cycle = %+v, want cycle 1 triggered by start", first)
	}
	for i, cy := range cycles.Cycles[1:] {
		if cy.Trigger != "cron" {
			t.Errorf("cycle %d triggered by %q; only the schedule starts cycles here", cy.ID, cy.Trigger)
		}
		if prev := cycles.Cycles[i]; prev.Ended == nil || cy.Started.Before(*prev.Ended) {
			t.Errorf("cycle %d started at %v, before cycle %d ended (%v)", cy.ID, cy.Started, prev.ID, prev.Ended)
		}
		if cy.Budget != 6 {
			t.Errorf("cron cycle %d has budget %d, want the spec's 6", cy.ID, cy.Budget)
		}
	}
	var ks []api.Kernel
	d.ctlJSON(&ks, "kernels")
	if len(ks) != 1 || ks[0].Schedule != "@every 1s" || len(ks[0].Jobs) != 1 || ks[0].Jobs[0].NextCycle == nil {
		t.Fatalf("kernels = %+v, want reduce scheduled @every 1s with its next cycle", ks)
	}
	t.Logf("%d cycles: %d by cron", len(cycles.Cycles), len(cycles.Cycles)-1)
}

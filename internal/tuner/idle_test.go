package tuner

import (
	"context"
	"crypto/ed25519"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

func idleTuner(st *store.Store, busy func(string) string, wait time.Duration) *Tuner {
	_, key, _ := ed25519.GenerateKey(nil)
	return New(Config{Store: st, Signer: key, Busy: busy, IdleWait: wait, IdlePoll: 10 * time.Millisecond,
		NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }})
}

func TestCycleWaitsForIdleDevice(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	var asks atomic.Int32
	busy := func(dev string) string {
		if dev != job.Key.Device {
			t.Errorf("Busy asked of %q", dev)
		}
		// Busy for the first three asks, then idle.
		if asks.Add(1) <= 3 {
			return "cpu load 0.93 above 0.50"
		}
		return ""
	}
	var states []string
	cy, err := idleTuner(st, busy, time.Minute).Cycle(context.Background(), job, Budget{Evals: 6}, "cron", 1, func(c store.Cycle) { states = append(states, c.State) })
	if err != nil {
		t.Fatal(err)
	}
	if cy.State != "done" || cy.Evals != 6 || cy.Busy != "cpu load 0.93 above 0.50" || cy.WaitedS < 0.02 {
		t.Fatalf("cycle = %+v", cy)
	}
	if len(states) == 0 || states[0] != "waiting" {
		t.Errorf("progress states %v, want waiting first", states)
	}
	stored, _ := st.Cycles(job.Key)
	if stored[0].WaitedS != cy.WaitedS || stored[0].Busy != cy.Busy {
		t.Errorf("stored cycle %+v lacks the wait", stored[0])
	}
}

func TestCycleSkippedOnBusyDevice(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	busy := func(string) string { return "gpu 0 used 80% by pid 4242" }
	cy, err := idleTuner(st, busy, 50*time.Millisecond).Cycle(context.Background(), job, Budget{Evals: 6}, "cron", 1, nil)
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("err = %v, want ErrBusy", err)
	}
	if cy.State != "skipped" || cy.Evals != 0 || cy.WaitedS < 0.05 || cy.Ended.IsZero() {
		t.Fatalf("cycle = %+v", cy)
	}
	if trials, _ := st.Trials(job.Key); len(trials) != 0 {
		t.Errorf("%d trials measured on a busy device", len(trials))
	}
	// Idle again: the next cycle starts afresh and runs.
	cy, err = idleTuner(st, func(string) string { return "" }, 0).Cycle(context.Background(), job, Budget{Evals: 2}, "cron", 1, nil)
	if err != nil || cy.ID != 2 || cy.State != "done" || cy.WaitedS != 0 {
		t.Fatalf("next cycle = %+v, %v", cy, err)
	}
}

func TestBusyMidCycleInterrupts(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	var asks atomic.Int32
	busy := func(string) string {
		if asks.Add(1) >= 3 { // idle for the first two generations
			return "cpu load 0.70 above 0.50"
		}
		return ""
	}
	cy, err := idleTuner(st, busy, 30*time.Millisecond).Cycle(context.Background(), job, Budget{Evals: 20}, "cron", 1, nil)
	if !errors.Is(err, ErrBusy) || cy.State != Unfinished || cy.Evals != 5 {
		t.Fatalf("cycle = %+v, %v; want interrupted after 5 evals", cy, err)
	}
	// The next start resumes it with the rest of its budget.
	cy, err = idleTuner(st, func(string) string { return "" }, 0).Cycle(context.Background(), job, Budget{Evals: 20}, "cron", 1, nil)
	if err != nil || cy.ID != 1 || cy.State != "done" || cy.Evals != 20 {
		t.Fatalf("resumed cycle = %+v, %v", cy, err)
	}
}

// Time spent waiting for an idle device does not use up a seconds budget.
func TestWaitNotInSecondsBudget(t *testing.T) {
	st := storetest.New(t)
	job := reduceJob(t)
	var asks atomic.Int32
	busy := func(string) string {
		if asks.Add(1) <= 100 { // about 1 s of waiting at a 10 ms poll
			return "cpu load 0.93 above 0.50"
		}
		return ""
	}
	cy, err := idleTuner(st, busy, time.Minute).Cycle(context.Background(), job, Budget{Seconds: 0.8}, "cron", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The default config goes alone first; a budget spent by the wait
	// would end the cycle there. (The budget is large enough for the
	// default's measurement on a loaded machine, and the wait longer.)
	if cy.State != "done" || cy.WaitedS < 0.8 || cy.Evals < 2 {
		t.Fatalf("cycle after %.2f s of waiting: %d evals (%s), want the 0.8 s budget spent tuning", cy.WaitedS, cy.Evals, cy.State)
	}
}

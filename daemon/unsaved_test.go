package daemon

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/tuner"
)

// A store that refuses every write (opened read-only, the way a full disk
// refuses the writes that need new space): a cycle fails at once, in
// memory, and the listing says its record is not in the state file yet; a
// later cycle fails the same way rather than resuming one. Once the store
// takes writes again, the kept records are written by the retry loop, and
// cycles run again.
func TestUnsavedCycles(t *testing.T) {
	dir := t.TempDir()
	specs := filepath.Join(dir, "kernels.d")
	if err := os.MkdirAll(specs, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := "name: reduce\nevaluator: builtin:reduce\nproblems: [\"65536\"]\nschedule: \"@every 1h\"\nbudget: {evals: 2}\n"
	if err := os.WriteFile(filepath.Join(specs, "reduce.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "quasim.db")
	open := func(ro bool) *store.Store {
		st, err := store.Open(path, store.Options{ReadOnly: ro, LockTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	_, key, _ := ed25519.GenerateKey(nil)
	rw := open(false)
	ts := newTestServerOn(t, specs, rw) // loads the spec; nothing runs before ctx is set
	use := func(st *store.Store) {
		ts.st, ts.srv.st, ts.sched.st = st, st, st
		ts.sched.tn = tuner.New(tuner.Config{Store: st, NewStrategy: defaultStrategy, Signer: key})
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	ro := open(true)
	use(ro)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ts.sched.mu.Lock()
	ts.sched.ctx = ctx
	var id string
	for k := range ts.sched.jobs {
		id = k
	}
	ts.sched.mu.Unlock()
	tune := func() {
		t.Helper()
		if err := ts.sched.trigger(id, runRequest{trigger: "api", budget: tuner.Budget{Evals: 2}}); err != nil {
			t.Fatal(err)
		}
		ts.sched.wg.Wait()
	}
	listing := func() []api.Cycle {
		t.Helper()
		code, body := ts.get(t, "/v1/kernels/reduce/cycles", nil)
		var cs api.Cycles
		if code != 200 || json.Unmarshal(body, &cs) != nil {
			t.Fatalf("GET cycles: %d %s", code, body)
		}
		return cs.Cycles
	}

	tune() // the store cannot create the cycle's record
	tune() // and still refuses the first cycle's record
	got := listing()
	if len(got) != 2 {
		t.Fatalf("cycles while the store refuses writes = %+v, want the 2 failed ones", got)
	}
	for i, cy := range got {
		if cy.ID != i+1 || cy.State != "failed" || cy.Ended == nil || !cy.Unsaved || cy.Trigger != "api" ||
			!strings.Contains(cy.Error, "state file not written") || !strings.Contains(cy.Error, "read-only") {
			t.Errorf("cycle %d = %+v, want cycle %d failed, ended, unsaved, saying the store refused it", i, cy, i+1)
		}
	}
	if v := ts.sched.view(ts.sched.jobs[id]); v.running {
		t.Errorf("job still running after its cycles failed")
	}

	// Space returns.
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	rw = open(false)
	defer rw.Close()
	use(rw)
	ts.sched.retryEvery = 10 * time.Millisecond
	rctx, stopRetry := context.WithCancel(ctx)
	ts.sched.wg.Go(func() { ts.sched.retryUnsaved(rctx) })
	deadline := time.Now().Add(10 * time.Second)
	for len(ts.sched.unsavedOf(ts.sched.jobs[id])) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("kept records not written 10s after the store took writes again: %+v", ts.sched.unsavedOf(ts.sched.jobs[id]))
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopRetry()
	ts.sched.wg.Wait()
	job := ts.sched.jobs[id].key
	stored, err := rw.Cycles(job)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 || stored[0].ID != 1 || stored[1].ID != 2 || stored[0].State != "failed" || stored[1].State != "failed" ||
		!strings.Contains(stored[1].Error, "read-only") {
		t.Fatalf("stored cycles after recovery = %+v, want the 2 failed ones", stored)
	}
	tune()
	got = listing()
	if len(got) != 3 || got[2].State != "done" || got[2].Unsaved || got[0].Unsaved {
		t.Fatalf("cycles after recovery = %+v, want a third, done, all stored", got)
	}

	// A cycle stored as running that ended failed: the record is replaced.
	running, err := rw.NewCycle(job, store.Cycle{Trigger: "api", State: "running", Started: time.Now(), Budget: 2})
	if err != nil {
		t.Fatal(err)
	}
	ended := running
	ended.State, ended.Error, ended.Ended = "failed", "state file not written: test", time.Now()
	ts.sched.settle(ts.sched.jobs[id], ended)
	if got := listing(); got[3].State != "failed" || !got[3].Unsaved {
		t.Errorf("cycle kept over a running record = %+v, want failed, unsaved", got[3])
	}
	if err := ts.sched.flush(ts.sched.jobs[id]); err != nil {
		t.Fatal(err)
	}
	if stored, _ := rw.Cycles(job); len(stored) != 4 || stored[3].State != "failed" || stored[3].Error != ended.Error {
		t.Errorf("stored after flush = %+v, want cycle 4 failed", stored)
	}
	// One that is stored as it ended is not kept.
	ts.sched.settle(ts.sched.jobs[id], stored[0])
	if n := len(ts.sched.unsavedOf(ts.sched.jobs[id])); n != 0 {
		t.Errorf("%d records kept for a cycle stored as it ended", n)
	}
}

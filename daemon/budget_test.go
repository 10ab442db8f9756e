package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/store"
)

// sideBranch is one iteration of pipeline side: conv2d 512,512,7 (900 ns)
// on stream a, sgemm 128,128,128 (100 ns) beside it on stream b. Only the
// convolution is on the critical path.
func sideBranch(it int) []causal.Span {
	t0 := int64(it) * 10_000
	id := uint64(it * 2)
	return []causal.Span{
		{ID: id + 1, Pipeline: "side", Iteration: it, Kernel: "conv2d", Problem: "512,512,7", Stream: "a", Start: t0, End: t0 + 900},
		{ID: id + 2, Pipeline: "side", Iteration: it, Kernel: "sgemm", Problem: "128,128,128", Stream: "b", Start: t0, End: t0 + 100},
	}
}

// The split's decision, deterministically from stored spans: the kernel on
// the critical path gets the pooled budget, the one beside it none, and
// each share says why; a job with a tuned best gets less headroom.
func TestSplitBudget(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "side.yaml"), []byte("pipeline: side\nkernels: [conv2d, sgemm]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, dir)
	p, ok := ts.sched.pipeline("side")
	if !ok || !p.BudgetByInfluence {
		t.Fatalf("pipeline side: %+v", p)
	}
	pick := func(kernel, problem string) *job {
		k, _ := ts.sched.kernel(kernel)
		for _, j := range k.jobs {
			if j.key.Problem == problem {
				return j
			}
		}
		t.Fatalf("no job %s %s", kernel, problem)
		return nil
	}
	conv, mm, other := pick("conv2d", "512,512,7"), pick("sgemm", "128,128,128"), pick("sgemm", "256,256,256")
	jobs := []*job{mm, conv, other}
	total := conv.kern.spec.Budget.Evals + mm.kern.spec.Budget.Evals

	// No spans: every job keeps its own budget.
	shares := ts.srv.splitBudget(context.Background(), p, jobs)
	if len(shares) != 3 || shares[0].job != mm || shares[0].evals != mm.kern.spec.Budget.Evals || shares[0].why != "" {
		t.Fatalf("without spans: %+v", shares)
	}

	var spans []causal.Span
	for it := range 5 {
		spans = append(spans, sideBranch(it)...)
	}
	data, _ := json.Marshal(spans)
	if _, err := ts.st.AddSpans("side", store.SpanBatch{At: time.Now(), Count: len(spans), Spans: data}, store.SpanRetention{}); err != nil {
		t.Fatal(err)
	}
	shares = ts.srv.splitBudget(context.Background(), p, jobs)
	// sgemm at 256,256,256 is not in the spans: it keeps its own budget,
	// outside the pool. sgemm at 128,128,128, off the critical path, has
	// nothing tuned: it gets a first cycle's least, not 0 (before, it
	// waited hours for its schedule with nothing served).
	least := firstCycle(mm.kern.spec.Budget.Evals)
	if len(shares) != 3 || shares[0].job != conv || shares[0].evals != total-least || shares[1].job != mm || shares[1].evals != least ||
		shares[2].job != other || shares[2].evals != other.kern.spec.Budget.Evals || shares[2].why != "" {
		t.Fatalf("by influence: %+v", shares)
	}
	if w := shares[0].why; !strings.Contains(w, "rank 1 of 2") || !strings.Contains(w, "influence 1.000 x headroom 0.50") || !strings.Contains(w, "of "+strconv.Itoa(total)+" evaluations") {
		t.Errorf("why: %q", w)
	}
	if w := shares[1].why; !strings.Contains(w, "influence 0.000") || !strings.Contains(w, strconv.Itoa(least)+" of ") || !strings.Contains(w, "first cycle") {
		t.Errorf("why: %q", w)
	}
}

// A cycle a crash left "running" in the store, of a job this start does not
// tune (budget by influence gave it nothing), reads as interrupted in
// cycles and is stored so; before, it showed running forever while
// kernels said the job was not running.
func TestCycleLeftRunning(t *testing.T) {
	ts := newTestServer(t, t.TempDir())
	k, _ := ts.sched.kernel("sgemm")
	j := k.jobs[0]
	if _, err := ts.st.NewCycle(j.key, store.Cycle{Trigger: "start", State: "running", Started: time.Now(), Budget: 10}); err != nil {
		t.Fatal(err)
	}
	status, body := ts.get(t, "/v1/kernels/sgemm/cycles?problem="+j.key.Problem, nil)
	var cs api.Cycles
	if err := json.Unmarshal(body, &cs); status != 200 || err != nil || len(cs.Cycles) != 1 {
		t.Fatalf("cycles: %d %s", status, body)
	}
	if got := cs.Cycles[0].State; got != "interrupted" {
		t.Errorf("a cycle left running by a crash reads %q, want interrupted", got)
	}
	ts.sched.mu.Lock()
	ts.sched.closeLeftRunning(j)
	ts.sched.mu.Unlock()
	last, ok, err := ts.st.LastCycle(j.key, false)
	if err != nil || !ok || last.State != "interrupted" {
		t.Errorf("stored cycle after closeLeftRunning: %+v, %v, %v; want interrupted", last, ok, err)
	}
}

// A job the split gives no evaluations says so in its listing (api.Job.Held),
// so that the report can list it with the reason instead of empty views.
func TestHeldByInfluence(t *testing.T) {
	ts := newTestServer(t, t.TempDir())
	k, _ := ts.sched.kernel("sgemm")
	j := k.jobs[0]
	ts.sched.splitBudget = func(context.Context, *spec.Pipeline, []*job) []jobShare {
		return []jobShare{{job: j, why: "pipeline side by influence: rank 2 of 2, 0 of 60 evaluations"}}
	}
	ts.sched.mu.Lock()
	ts.sched.startPooled(map[*spec.Pipeline][]*job{{Name: "side"}: {j}})
	ts.sched.mu.Unlock()
	ts.sched.wg.Wait()
	status, body := ts.get(t, "/v1/kernels", nil)
	var ks []api.Kernel
	if err := json.Unmarshal(body, &ks); status != 200 || err != nil {
		t.Fatalf("kernels: %d %s", status, body)
	}
	found := false
	for _, ak := range ks {
		for _, aj := range ak.Jobs {
			found = found || aj.ID == j.key.String()
			if held := aj.Held != ""; held != (aj.ID == j.key.String()) {
				t.Errorf("job %s held %q", aj.ID, aj.Held)
			} else if held && !strings.Contains(aj.Held, "budget by influence gave it no evaluations this time (pipeline side by influence: rank 2 of 2") {
				t.Errorf("held = %q", aj.Held)
			}
		}
	}
	if !found {
		t.Errorf("job %s not listed: %s", j.key, body)
	}
}

package cli

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
)

const sgemmJob = "sgemm/256,256,256/cpu"

// tuneScript makes the fake's new cycle of sgemmJob run for two polls and
// end in state final; an old cycle of the same job, running since before the
// tune request, and a cycle of another job must be ignored.
func tuneScript(final string) func(*fakeDaemon) {
	return func(f *fakeDaemon) {
		f.script = func(kernel string, poll int, tuned time.Time) []api.Cycle {
			old := api.Cycle{ID: 5, Job: sgemmJob, Kernel: "sgemm", Problem: "256,256,256", State: "running", Started: tuned.Add(-time.Hour), Budget: 100, Evals: 50}
			other := api.Cycle{ID: 6, Job: "sgemm/1024,1024,1024/cpu", Kernel: "sgemm", Problem: "1024,1024,1024", State: "running", Started: tuned, Budget: 9}
			c := api.Cycle{ID: 7, Job: sgemmJob, Kernel: "sgemm", Problem: "256,256,256", Device: "cpu/test", Trigger: "api",
				State: "running", Started: tuned.Add(time.Millisecond), Budget: 4}
			switch poll {
			case 1:
				c.Evals, c.BestMS, c.BestKey = 1, 5, "8,True,tiled"
			case 2, 3: // the same progress twice prints one line
				c.Evals, c.BestMS, c.BestKey = 3, 4.2134, "16,True,tiled"
			default:
				c.State, c.Evals, c.BestMS, c.BestKey = final, 4, 4.2134, "16,True,tiled"
				c.Ended = ptr(tuned.Add(time.Second))
				if final == "done" {
					c.Promoted = "16,True,tiled"
				} else {
					c.Error = "device lost"
				}
			}
			return []api.Cycle{old, other, c}
		}
	}
}

func TestTuneWait(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t, tuneScript("done"))
	out, errs, code := f.ctl(t, "tune", "sgemm", "--problem", "256,256,256", "--budget", "4", "--wait", "--poll", "5ms")
	if code != 0 {
		t.Fatalf("tune --wait = %d, want 0 (stderr %q)", code, errs)
	}
	f.mu.Lock()
	sent := f.lastTune
	f.mu.Unlock()
	if sent != (api.TuneRequest{Problem: "256,256,256", Budget: 4}) {
		t.Errorf("tune sent %+v, want problem 256,256,256 and budget 4", sent)
	}
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("tune --wait progress = %q, want 2 lines", errs)
	}
	mustContain(t, "progress line 1", lines[0], "sgemm 256,256,256: 1/4 evals, best 5.00 ms, ETA ")
	mustContain(t, "progress line 2", lines[1], "sgemm 256,256,256: 3/4 evals, best 4.21 ms, ETA ")
	if strings.Contains(errs, "50/100") || strings.Contains(errs, "1024") {
		t.Errorf("progress %q shows a cycle that is not the new one", errs)
	}
	want := `CYCLE  PROBLEM      DEVICE    STATE  EVALS  BEST_MS  BEST_KEY       PROMOTED       ERROR
7      256,256,256  cpu/test  done   4      4.213    16,True,tiled  16,True,tiled  -
`
	if out != want {
		t.Errorf("tune --wait =\n%s\nwant\n%s", out, want)
	}
}

func TestTuneWaitJSON(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t, tuneScript("done"))
	out, errs, code := f.ctl(t, "--json", "tune", "sgemm", "--problem", "256,256,256", "--wait", "--poll", "5ms")
	if code != 0 {
		t.Fatalf("tune --wait --json = %d, want 0 (stderr %q)", code, errs)
	}
	got := decodeStrict[api.Cycles](t, out)
	if got.Kernel != "sgemm" || len(got.Cycles) != 1 || got.Cycles[0].ID != 7 || got.Cycles[0].State != "done" || got.Cycles[0].Promoted != "16,True,tiled" {
		t.Errorf("tune --wait --json = %+v, want cycle 7 done", got)
	}
}

func TestTuneWaitFailed(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t, tuneScript("failed"))
	out, errs, code := f.ctl(t, "tune", "sgemm", "--problem", "256,256,256", "--wait", "--poll", "5ms")
	if code != 1 {
		t.Fatalf("tune --wait on a failing cycle = %d, want 1 (stderr %q)", code, errs)
	}
	mustContain(t, "stdout", out, "failed", "device lost")
	mustContain(t, "stderr", errs, "quasimctl: tune sgemm: cycle 7 (256,256,256) failed: device lost")
}

func TestTuneTimeout(t *testing.T) {
	t.Parallel()
	// The cycle of the second job never starts.
	f := newFakeDaemon(t, tuneScript("done"))
	_, errs, code := f.ctl(t, "tune", "sgemm", "--wait", "--poll", "5ms", "--timeout", "200ms")
	if code != 1 {
		t.Fatalf("tune --wait --timeout = %d, want 1 (stderr %q)", code, errs)
	}
	mustContain(t, "stderr", errs,
		"sgemm: waiting for the cycle of job sgemm/512,512,512/cpu to start",
		"wait for the cycles of sgemm: gave up after --timeout 200ms")
}

func TestTuneNoWait(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	out, errs, code := f.ctl(t, "tune", "sgemm")
	if code != 0 {
		t.Fatalf("tune = %d, want 0 (stderr %q)", code, errs)
	}
	want := "queued 2 jobs of sgemm\n  sgemm/256,256,256/cpu\n  sgemm/512,512,512/cpu\n"
	if out != want {
		t.Errorf("tune = %q, want %q", out, want)
	}
	out, _, code = f.ctl(t, "tune", "sgemm", "--json", "--problem", "512,512,512")
	if code != 0 {
		t.Fatalf("tune --json = %d, want 0", code)
	}
	wantJSON := api.TuneResponse{Kernel: "sgemm", Jobs: []string{"sgemm/512,512,512/cpu"}}
	if got := decodeStrict[api.TuneResponse](t, out); !reflect.DeepEqual(got, wantJSON) {
		t.Errorf("tune --json = %+v, want %+v", got, wantJSON)
	}
}

func TestProgressLine(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		c    api.Cycle
		now  time.Time
		want string
	}{
		{api.Cycle{Kernel: "sgemm", Problem: "256,256,256", Started: start, Budget: 20, Evals: 12, BestMS: 4.2134},
			start.Add(9 * time.Second), "sgemm 256,256,256: 12/20 evals, best 4.21 ms, ETA 6s"},
		{api.Cycle{Kernel: "sgemm", Started: start, Budget: 20},
			start.Add(time.Second), "sgemm: 0/20 evals, best -"},
		{api.Cycle{Kernel: "k", Problem: "8", Started: start, BudgetS: 60, Evals: 3, BestMS: 0.5},
			start.Add(20 * time.Second), "k 8: 3 evals, best 0.500 ms, ETA 40s"},
		{api.Cycle{Kernel: "k", Problem: "8", Started: start, Budget: 100, BudgetS: 30, Evals: 10, BestMS: 1},
			start.Add(20 * time.Second), "k 8: 10/100 evals, best 1.00 ms, ETA 10s"},
	}
	for _, tt := range tests {
		if got := progressLine(tt.c, tt.now); got != tt.want {
			t.Errorf("progressLine(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

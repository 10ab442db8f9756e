package cli

import (
	"io"
	"os"
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
	// Long enough for the requests before the wait on a loaded machine.
	_, errs, code := f.ctl(t, "tune", "sgemm", "--wait", "--poll", "5ms", "--timeout", "2s")
	if code != 1 {
		t.Fatalf("tune --wait --timeout = %d, want 1 (stderr %q)", code, errs)
	}
	mustContain(t, "stderr", errs,
		"sgemm: waiting for the cycle of job sgemm/512,512,512/cpu to start",
		"wait for the cycles of sgemm: gave up after --timeout 2s")
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

// idleScript makes the new cycle of sgemmJob wait for an idle device for
// waitPolls polls; then it ends in state final, having run when final is
// "done" (a "skipped" cycle measured nothing).
func idleScript(waitPolls int, final string) func(*fakeDaemon) {
	return func(f *fakeDaemon) {
		f.script = func(kernel string, poll int, tuned time.Time) []api.Cycle {
			c := api.Cycle{ID: 7, Job: sgemmJob, Kernel: "sgemm", Problem: "256,256,256", Device: "cpu/test", Trigger: "api",
				State: "waiting", Started: tuned.Add(time.Millisecond), Budget: 4, WaitedS: float64(poll),
				Busy: "CPU load of other processes 1.98 above 0.30"}
			switch {
			case poll <= waitPolls:
			case poll == waitPolls+1 && final == "done":
				c.State, c.Busy, c.Evals, c.BestMS = "running", "", 2, 4.5
			default:
				c.State, c.Ended = final, ptr(tuned.Add(time.Second))
				if final == "done" {
					c.Busy, c.Evals, c.BestMS, c.BestKey, c.Promoted = "", 4, 4.2, "16,True,tiled", "16,True,tiled"
				}
			}
			return []api.Cycle{c}
		}
	}
}

// A cycle waiting for an idle device is followed until it is done; the
// wait is shown once (not a terminal), then the progress.
func TestTuneWaitWaitsForIdleDevice(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t, idleScript(3, "done"))
	out, errs, code := f.ctl(t, "tune", "sgemm", "--problem", "256,256,256", "--wait", "--poll", "5ms")
	if code != 0 {
		t.Fatalf("tune --wait = %d, want 0 (stdout %q, stderr %q)", code, out, errs)
	}
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("tune --wait progress = %q, want 2 lines: the wait, then the progress", errs)
	}
	mustContain(t, "wait line", lines[0], "sgemm 256,256,256: waiting for an idle device (CPU load of other processes 1.98 above 0.30; quasimd --idle-cpu 0 turns the wait off), 0/4 evals, waited 1s")
	mustContain(t, "progress line", lines[1], "sgemm 256,256,256: 2/4 evals, best 4.50 ms")
	mustContain(t, "stdout", out, "done", "16,True,tiled")
}

// A cycle given up because the device stayed busy fails the wait.
func TestTuneWaitSkipped(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t, idleScript(2, "skipped"))
	out, errs, code := f.ctl(t, "tune", "sgemm", "--problem", "256,256,256", "--wait", "--poll", "5ms")
	if code != 1 {
		t.Fatalf("tune --wait on a skipped cycle = %d, want 1 (stdout %q, stderr %q)", code, out, errs)
	}
	mustContain(t, "stdout", out, "skipped")
	mustContain(t, "stderr", errs, "quasimctl: tune sgemm: cycle 7 (256,256,256) skipped: device busy: CPU load of other processes 1.98 above 0.30 (quasimd --idle-cpu 0 turns the wait off)")
}

// --timeout while the cycle waits for an idle device exits 1 and says so.
func TestTuneWaitTimeoutWhileWaiting(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t, idleScript(1<<30, "done"))
	_, errs, code := f.ctl(t, "tune", "sgemm", "--problem", "256,256,256", "--wait", "--poll", "5ms", "--timeout", "2s")
	if code != 1 {
		t.Fatalf("tune --wait --timeout = %d, want 1 (stderr %q)", code, errs)
	}
	mustContain(t, "stderr", errs, "wait for the cycles of sgemm: gave up after --timeout 2s (cycles go on in quasimd): cycle 7 (256,256,256) waiting for an idle device: CPU load of other processes 1.98 above 0.30 (quasimd --idle-cpu 0 turns the wait off)")
}

// A tune that resumes the job's interrupted cycle (same ID, started long
// before the request) is followed to its end.
func TestTuneWaitResumed(t *testing.T) {
	t.Parallel()
	old := fakeT0.Add(-time.Hour)
	f := newFakeDaemon(t, func(f *fakeDaemon) {
		f.cycles["sgemm"] = append(f.cycles["sgemm"], api.Cycle{ID: 7, Job: sgemmJob, Kernel: "sgemm", Problem: "256,256,256",
			Trigger: "cron", State: "interrupted", Started: old, Budget: 4, Evals: 2})
		f.script = func(kernel string, poll int, tuned time.Time) []api.Cycle {
			c := api.Cycle{ID: 7, Job: sgemmJob, Kernel: "sgemm", Problem: "256,256,256", Trigger: "cron", State: "running", Started: old, Budget: 4, Evals: 3, BestMS: 2}
			if poll > 2 {
				c.State, c.Evals, c.Ended, c.Promoted = "done", 4, ptr(tuned), "16,True,tiled"
			}
			return []api.Cycle{c}
		}
	})
	out, errs, code := f.ctl(t, "tune", "sgemm", "--problem", "256,256,256", "--wait", "--poll", "5ms", "--timeout", "5s")
	if code != 0 {
		t.Fatalf("tune --wait resuming cycle 7 = %d, want 0 (stdout %q, stderr %q)", code, out, errs)
	}
	mustContain(t, "stdout", out, "7 ", "done", "16,True,tiled")
}

// On a terminal each job has one line, redrawn in place: the cursor goes
// back up over the lines drawn before and each line is cleared first.
func TestProgressRedrawsOnTerminal(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	jobs := []string{"k/1/cpu", "k/2/cpu"}
	p := newProgress(&b, jobs)
	p.tty = true
	now := fakeT0.Add(10 * time.Second)
	c1 := api.Cycle{ID: 1, Job: jobs[0], Kernel: "k", Problem: "1", State: "running", Started: fakeT0, Budget: 10, Evals: 5, BestMS: 1}
	p.show(c1, now)
	p.draw()
	c2 := api.Cycle{ID: 4, Job: jobs[1], Kernel: "k", Problem: "2", State: "waiting", Started: fakeT0, Budget: 10, Busy: "busy", WaitedS: 3}
	c1.Evals = 8
	p.show(c2, now)
	p.show(c1, now)
	p.draw()
	c1.State, c1.Evals, c1.BestMS = "done", 10, 0.5
	p.show(c1, now)
	p.draw()
	want := "\r\x1b[2Kk 1: 5/10 evals, best 1.00 ms, ETA 10s\n" +
		"\x1b[1A\r\x1b[2Kk 1: 8/10 evals, best 1.00 ms, ETA 3s\n\r\x1b[2Kk 2: waiting for an idle device (busy; quasimd --idle-cpu 0 turns the wait off), 0/10 evals, waited 3s\n" +
		"\x1b[2A\r\x1b[2Kk 1: done, 10/10 evals, best 0.500 ms\n\r\x1b[2Kk 2: waiting for an idle device (busy; quasimd --idle-cpu 0 turns the wait off), 0/10 evals, waited 3s\n"
	if got := b.String(); got != want {
		t.Errorf("terminal output =\n%q\nwant\n%q", got, want)
	}
	// Not a terminal: a line per change, none for an ended cycle.
	b.Reset()
	p = newProgress(&b, jobs)
	c1.State, c1.Evals = "running", 5
	for range 2 {
		p.show(c1, now)
		p.draw()
	}
	c1.State = "done"
	p.show(c1, now)
	p.draw()
	if got, want := b.String(), "k 1: 5/10 evals, best 0.500 ms, ETA 10s\n"; got != want {
		t.Errorf("output off a terminal = %q, want %q", got, want)
	}
}

// Progress redraws only on a terminal: not in a pipe, a file or
// /dev/null (a character device, but no terminal), nor when TERM=dumb.
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, w := range map[string]io.Writer{"pipe": w, "/dev/null": null, "buffer": &strings.Builder{}} {
		if isTerminal(w) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to check the positive case: %v", err)
	}
	defer pty.Close()
	t.Setenv("TERM", "xterm")
	if !isTerminal(pty) {
		t.Errorf("a pseudo-terminal is not taken for a terminal")
	}
	t.Setenv("TERM", "dumb")
	if isTerminal(pty) {
		t.Errorf("a terminal with TERM=dumb is taken for one that redraws")
	}
}

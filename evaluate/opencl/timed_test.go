package opencl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/testload"
)

// helperPIDs are the compile helpers whose environment holds marker (each
// test gives its workers a POCL_CACHE_DIR of its own).
func helperPIDs(t *testing.T, marker string) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []int
	for _, f := range stats {
		cmd, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(cmd, []byte("--helper")) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(filepath.Dir(f), "environ"))
		if err != nil || !bytes.Contains(env, []byte(marker)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		out = append(out, pid)
	}
	return out
}

// running lists the threads of pid that are not stopped (state R, S or D
// in /proc/PID/task/TID/stat).
func running(pid int) []string {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
	var out []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && !bytes.ContainsRune([]byte("TtZX"), rune(b[i+2])) {
			out = append(out, filepath.Base(filepath.Dir(f))+":"+string(b[i+2]))
		}
	}
	return out
}

// The compile helpers are stopped (SIGSTOP) while the worker times a
// kernel and between requests, so no helper shares the cores with a
// timed run: a helper busy on a kernel that never returns (FAULT 3) is
// seen running in /proc while the worker builds, and stopped once the
// worker's request is answered, with the timed runs made in between.
func TestHelpersStoppedWhileTimed(t *testing.T) {
	d := needDevice(t)
	if !strings.Contains(d.Devices[0].Platform, "Portable Computing Language") || !helpersWork {
		t.Skipf("compile helpers run with pocl only; device %s is not pocl's", d.Devices[0].Name)
	}
	k := scaleKernel(t)
	k.CompileAhead = "process"
	cache := t.TempDir()
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(20 * time.Second),
		Env: []string{"POCL_CACHE_DIR=" + cache, "POCL_KERNEL_CACHE=1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	p := evaluate.Problem{Dims: []int{1 << 20}, Names: []string{"n"}}
	good := genome.Config{1, 0, 0}
	if tr, err := ev.Evaluate(context.Background(), good, p); err != nil || !tr.OK() {
		t.Fatalf("Evaluate(%v) = %+v, %v", good, tr, err)
	}
	// A helper takes the hanging config; it runs only while the worker
	// answers a request and is not launching.
	ev.Prefetch([]genome.Config{{0, 0, 3}}, p)
	sawRunning := false
	for i := 0; i < 5; i++ {
		done := make(chan struct{})
		var tr evaluate.Trial
		var err error
		go func() {
			defer close(done)
			tr, err = ev.Evaluate(context.Background(), genome.Config{1, 1, 0}, p)
		}()
		for polling := true; polling; {
			select {
			case <-done:
				polling = false
			default:
				for _, pid := range helperPIDs(t, cache) {
					sawRunning = sawRunning || len(running(pid)) > 0
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
		if err != nil || !tr.OK() || len(tr.Times) == 0 {
			t.Fatalf("Evaluate = %+v, %v", tr, err)
		}
		// The request is answered: every helper thread is stopped.
		pids := helperPIDs(t, cache)
		if len(pids) == 0 {
			t.Fatal("no compile helper process found")
		}
		for _, pid := range pids {
			if r := running(pid); len(r) > 0 {
				t.Fatalf("round %d: helper %d has threads not stopped after the worker's timed runs (%d): %v", i, pid, len(tr.Times), r)
			}
		}
	}
	if !sawRunning {
		t.Log("no helper was seen running while the worker built: they ran between polls")
	}
}

// Racing on a real OpenCL kernel: with a best time far below the
// config's, the measurement stops after Reps.Min runs (a few more under
// load); without one it
// makes Reps.Max (its confidence interval can never be narrow enough here).
func TestRacingStopsEarlyOnOpenCL(t *testing.T) {
	needDevice(t)
	reps := evaluate.Reps{Min: 3, Max: 24, RelCI: 1e-12, MaxTime: time.Minute}
	ev, err := New(scaleKernel(t), Options{Worker: workerCmd(), Timeout: testload.Scale(20 * time.Second), Reps: reps})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	p := evaluate.Problem{Dims: []int{1 << 16}, Names: []string{"n"}}
	c := genome.Config{1, 0, 0}
	measure := func() evaluate.Trial {
		t.Helper()
		tr, err := ev.Evaluate(context.Background(), c, p)
		if err != nil || !tr.OK() {
			t.Fatalf("Evaluate(%v) = %+v, %v", c, tr, err)
		}
		return tr
	}
	full := measure()
	if len(full.Times) != reps.Max {
		t.Fatalf("without racing: %d runs, want Reps.Max %d", len(full.Times), reps.Max)
	}
	var _ evaluate.Racer = ev
	ev.Race(p, full.Time/100)
	raced := measure()
	// Reps.Min on a quiet machine; under load the runs scatter, the
	// median's interval widens and racing waits a few runs more (6 of 24
	// beside two busy loops on 2 cores). Without racing it is Reps.Max.
	if len(raced.Times) < reps.Min || len(raced.Times) > reps.Max/2 {
		t.Errorf("raced against a best 100 times faster: %d runs, want Reps.Min %d (at most %d under load)", len(raced.Times), reps.Min, reps.Max/2)
	}
	ev.Race(p, 0)
	if again := measure(); len(again.Times) != reps.Max {
		t.Errorf("racing off again: %d runs, want %d", len(again.Times), reps.Max)
	}
	t.Logf("runs: %d unraced (median %.4f ms), %d raced", len(full.Times), full.Time, len(raced.Times))
}

// Under compile_ahead auto, helpers start only once a build of the
// worker's own took longer than Kernel.HelpersAfter (by default the
// worker's own start, which each helper pays again): for a kernel that
// builds faster, the worker builds every config itself and no helper
// process starts, whatever it was told comes next; after a slow build the
// configs told wait for helpers.
func TestHelpersWaitForASlowBuild(t *testing.T) {
	d := needDevice(t)
	if !strings.Contains(d.Devices[0].Platform, "Portable Computing Language") || !helpersWork {
		t.Skipf("compile helpers run with pocl only; device %s is not pocl's", d.Devices[0].Name)
	}
	p := evaluate.Problem{Dims: []int{10000}, Names: []string{"n"}}
	for _, tt := range []struct {
		after   time.Duration
		helpers bool
	}{{time.Hour, false}, {time.Nanosecond, true}} {
		k := scaleKernel(t)
		k.HelpersAfter = tt.after
		cache := t.TempDir()
		ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(20 * time.Second),
			Env: []string{"POCL_CACHE_DIR=" + cache, "POCL_KERNEL_CACHE=1"}})
		if err != nil {
			t.Fatal(err)
		}
		cs := []genome.Config{{0, 1, 0}, {1, 0, 0}, {2, 2, 0}, {1, 1, 0}}
		ev.Prefetch(cs, p)
		for _, c := range cs {
			if tr, err := ev.Evaluate(context.Background(), c, p); err != nil || !tr.OK() {
				t.Fatalf("Evaluate(%v) = %+v, %v", c, tr, err)
			}
		}
		n := len(helperPIDs(t, cache))
		ev.Close()
		if (n > 0) != tt.helpers {
			t.Errorf("helpers_after %v: %d helper processes after 4 configs told and run; want helpers %v", tt.after, n, tt.helpers)
		}
	}
}

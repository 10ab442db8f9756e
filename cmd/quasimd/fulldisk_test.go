package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/testload"
)

// fill writes path until the file system is full (ENOSPC).
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v, want ENOSPC", path, err)
			}
			return
		}
	}
}

// With the state directory on a 2 MB tmpfs that fills up, a cycle whose
// writes fail ends failed at once (not running forever), tune --wait says
// why and exits 1, a later tune fails the same way instead of waiting for
// its cycle to start, the served config is still served, and once space
// returns the daemon writes the failed records and tunes again by itself.
//
// Not run in parallel: beside the other tests, 2 of 4 package runs failed
// with a kept record written to the state file (the log said so within a
// second of the space returning) still listed unsaved 60 s later; alone it
// passed 18 of 18, also with every CPU loaded.
func TestFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: mounts a tmpfs and runs the real binaries")
	}
	dir := newDir(t, map[string]string{"reduce.yaml": reduceSpec})
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", state).CombinedOutput(); err != nil {
		t.Skipf("skipping: the full-disk test needs a 2 MB tmpfs for the state directory, and mounting one failed "+
			"(it needs root or CAP_SYS_ADMIN): %v: %s", err, strings.TrimSpace(string(out)))
	}
	// Registered before the daemon starts, so it runs after the daemon is stopped.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", state).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", state, err, out)
		}
	})
	d := start(t, dir)
	cfg := waitServed(t, d, "65536")
	filler := filepath.Join(state, "filler")
	fill(t, filler)

	// The reduce space holds about 280 configs: tuning all of them needs far
	// more pages than the state file has free.
	t0 := time.Now()
	out, errs, code := d.ctl("tune", "reduce", "--budget", "400", "--wait", "--poll", "100ms", "--timeout", "1m")
	if code != 1 || strings.Contains(errs, "--timeout") || !strings.Contains(errs, "failed: state file not written") ||
		!strings.Contains(errs, "no space left on device") {
		t.Fatalf("tune --wait on a full disk = exit %d after %s, want 1 naming the full disk\nstdout:\n%s\nstderr:\n%s", code, time.Since(t0), out, errs)
	}
	t.Logf("tune --wait on a full disk, %s: %s", time.Since(t0).Round(time.Millisecond), lastLine(errs))
	var cycles api.Cycles
	d.ctlJSON(&cycles, "cycles", "reduce")
	failed := cycles.Cycles[len(cycles.Cycles)-1]
	if failed.State != "failed" || failed.Ended == nil || !strings.Contains(failed.Error, "no space left on device") {
		t.Fatalf("the cycle that hit the full disk = %+v, want failed and ended", failed)
	}
	st := d.unhealthy()
	if len(st.Failing) != 1 || !strings.Contains(st.Failing[0].Error, "no space left on device") {
		t.Errorf("status failing = %+v, want the full disk", st.Failing)
	}
	if len(st.Running) != 0 {
		t.Errorf("status running = %v after the cycle failed", st.Running)
	}
	// Serving goes on from what is stored.
	var now api.Config
	d.ctlJSON(&now, "config", "reduce", "--problem", "65536")
	if now.Match != api.MatchExact || now.Key != cfg.Key || now.Certificate != cfg.Certificate {
		t.Errorf("config on a full disk = %+v, want the served %s", now, cfg.Key)
	}
	// A later tune fails too, and says so, rather than waiting for a cycle
	// that cannot start. (Whether the failed record itself fits in the
	// file's free pages varies: a record that does not is shown "not yet in
	// the state file" and written later; daemon's TestUnsavedCycles covers
	// that path.)
	out, errs, code = d.ctl("tune", "reduce", "--budget", "400", "--wait", "--poll", "100ms", "--timeout", "1m")
	if code != 1 || strings.Contains(errs, "--timeout") || !strings.Contains(errs, "no space left on device") {
		t.Fatalf("second tune --wait on a full disk = exit %d, want 1 naming the full disk\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	out, _, _ = d.ctl("cycles", "reduce")
	t.Logf("cycles on the full disk:\n%s", out)

	// Space returns: the kept records are written by themselves.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		d.ctlJSON(&cycles, "cycles", "reduce")
		unsaved := 0
		for _, cy := range cycles.Cycles {
			if cy.Unsaved {
				unsaved++
			}
		}
		if unsaved == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d cycle records still not written 60s after space returned: %+v", unsaved, cycles.Cycles)
		}
		time.Sleep(200 * time.Millisecond)
	}
	out, errs, code = d.ctl("tune", "reduce", "--budget", "4", "--wait", "--poll", "100ms", "--timeout", "2m")
	if code != 0 {
		t.Fatalf("tune --wait after space returned = exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	d.stop()

	// On disk: the failed cycles are failed (none left running to be
	// resumed), the last one is done, and the file is consistent.
	db, err := store.Open(filepath.Join(state, "quasim.db"), store.Options{ReadOnly: true, LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Errorf("state file after the full disk: %v", err)
	}
	keys, err := db.Jobs()
	if err != nil || len(keys) != 1 {
		t.Fatalf("jobs %v, %v; want the one reduce job", keys, err)
	}
	stored, err := db.Cycles(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	nFailed := 0
	for i, cy := range stored {
		switch {
		case i == len(stored)-1:
			if cy.State != "done" {
				t.Errorf("last stored cycle %+v, want done", cy)
			}
		case cy.State == "failed":
			nFailed++
			if !strings.Contains(cy.Error, "no space left on device") || cy.Ended.IsZero() {
				t.Errorf("stored failed cycle %+v, want the full disk as its error and an end", cy)
			}
		case cy.State != "done":
			t.Errorf("stored cycle %+v, want done or failed", cy)
		}
	}
	if nFailed < 2 {
		t.Errorf("%d failed cycles stored, want the 2 the full disk failed: %+v", nFailed, stored)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
)

// A job made to fail (its device's lock file cannot be opened) and then
// fixed returns status to exit 0 by itself: failed cycles are tried again
// after --retry-min, doubling, without a manual tune. While it fails,
// status says since when and when it is tried next.
func TestFailedCycleRetried(t *testing.T) {
	t.Parallel()
	d := start(t, newDir(t, map[string]string{"reduce.yaml": reduceSpec}), "--retry-min", "1s")
	waitServed(t, d, "65536")
	locks, _ := filepath.Glob(filepath.Join(filepath.Dir(d.socket), "locks", "*.lock"))
	if len(locks) == 0 {
		t.Fatal("no lock files")
	}
	for _, l := range locks {
		// A lock file that cannot be opened: a link into a missing folder.
		os.Remove(l)
		if err := os.Symlink("/nonexistent/quasim/lock", l); err != nil {
			t.Fatal(err)
		}
	}
	if _, errs, code := d.ctl("tune", "reduce", "--problem", "65536", "--budget", "2"); code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errs)
	}
	status := func() (api.Status, string, int) {
		out, _, code := d.ctl("status", "--json")
		var st api.Status
		json.Unmarshal([]byte(out), &st)
		text, _, _ := d.ctl("status")
		return st, text, code
	}
	deadline := time.Now().Add(60 * time.Second)
	var st api.Status
	for {
		var text string
		var code int
		st, text, code = status()
		if code == 6 && len(st.Failing) == 1 && st.Failing[0].RetryAt != nil {
			if !strings.Contains(text, "failing since") || !strings.Contains(text, "tried again at") {
				t.Errorf("status does not say since when and when next:\n%s", text)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never said failing with a retry due (exit %d):\n%s", code, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
	f := st.Failing[0]
	if f.Since.IsZero() || f.Since.After(f.At) || !strings.Contains(f.Error, "lock") {
		t.Errorf("failing = %+v, want since <= at and the lock's error", f)
	}
	// Failures go on while the link is there: the retries back off.
	time.Sleep(4 * time.Second)
	st, _, _ = status()
	if len(st.Failing) != 1 || st.Failing[0].Cycle <= f.Cycle || !st.Failing[0].Since.Equal(f.Since) {
		t.Errorf("after 4 s: failing = %+v, want a later failed cycle with the same since %s", st.Failing, f.Since)
	}
	fixed := time.Now()
	for _, l := range locks {
		os.Remove(l)
	}
	for {
		st, text, code := status()
		if code == 0 && len(st.Failing) == 0 {
			t.Logf("healthy %.1f s after the fix, without a tune", time.Since(fixed).Seconds())
			break
		}
		if time.Since(fixed) > 45*time.Second {
			t.Fatalf("status still exit %d 45 s after the fix:\n%s", code, text)
		}
		time.Sleep(200 * time.Millisecond)
	}
	d.stop()
}

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/internal/testload"
)

// While every cycle fails (here the CPU's lock file cannot be opened),
// quasimctl status names the job and the cause, says when a cycle last
// succeeded, and exits 6; before, it showed nothing wrong and exited 0.
func TestStatusWhileCyclesFail(t *testing.T) {
	t.Parallel()
	var lock string
	d := startWith(t, newDir(t, map[string]string{"reduce.yaml": reduceSpec}), func(sockDir string, _ *exec.Cmd) {
		lock = daemon.LockFile(filepath.Join(sockDir, "locks"), builtin.CPUClass())
	})
	waitServed(t, d, "65536")
	if _, errs, code := d.ctl("status"); code != 0 {
		t.Fatalf("status after a good cycle = %d, want 0: %s", code, errs)
	}
	// A lock file that no one can open: a link into a folder that is not there.
	os.Remove(lock)
	if err := os.Symlink("/nonexistent/quasim/cpu.lock", lock); err != nil {
		t.Fatal(err)
	}
	d.ctl("tune", "reduce", "--problem", "65536", "--budget", "2", "--wait")
	out, errs, code := d.ctl("status")
	if code != 6 {
		t.Errorf("status while cycles fail = %d, want 6\n%s%s", code, out, errs)
	}
	for _, want := range []string{"failing:      1\n  reduce|", "failed at", "last success ", "no such file or directory"} {
		if !strings.Contains(out, want) {
			t.Errorf("status does not say %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "1 job failing (reduce|") {
		t.Errorf("status's stderr does not name the failing job: %q", errs)
	}
	out, _, code = d.ctl("status", "--json")
	var st api.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 6 {
		t.Fatalf("status --json: exit %d, %v:\n%s", code, err, out)
	}
	if len(st.Failing) != 1 || st.LastSuccess == nil || st.Failing[0].LastSuccess == nil || !strings.Contains(st.Failing[0].Error, "lock") {
		t.Errorf("status --json = %+v, want one failing job with its lock error and a last success", st)
	}

	// Once the lock opens again, the next cycle succeeds and status is
	// healthy again.
	os.Remove(lock)
	d.ctl("tune", "reduce", "--problem", "65536", "--budget", "2", "--wait")
	if out, errs, code := d.ctl("status"); code != 0 {
		t.Errorf("status after the lock came back = %d, want 0\n%s%s", code, out, errs)
	}
}

// A lock file the daemon's user cannot write (root's, left by a run of the
// quick start as root before the service) still locks: flock needs only a
// read-only descriptor. Before, every cycle failed with permission denied.
func TestLockFileOfAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("skipping: needs root to run quasimd as another uid")
	}
	const nobody = 65534
	dir, err := os.MkdirTemp("", "qn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, body := range map[string]string{"reduce.yaml": reduceSpec} {
		p := filepath.Join(dir, "kernels.d", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chownAll(t, dir, nobody)
	d := startWith(t, dir, func(sockDir string, cmd *exec.Cmd) {
		locks := filepath.Join(sockDir, "locks")
		if err := os.MkdirAll(locks, 0o755); err != nil {
			t.Fatal(err)
		}
		chownAll(t, sockDir, nobody)
		// root's lock file, mode 0644, in the service user's folder
		lock := daemon.LockFile(locks, builtin.CPUClass())
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(sockDir, "notify"), 0o777)
		// the binary, where nobody may run it
		bin, err := os.ReadFile(cmd.Path)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Path = filepath.Join(sockDir, "quasimd")
		if err := os.WriteFile(cmd.Path, bin, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		cmd.Env = append(cmd.Env, "HOME=/nonexistent")
	})
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		var cycles api.Cycles
		d.ctlJSON(&cycles, "cycles", "reduce")
		if len(cycles.Cycles) > 0 && cycles.Cycles[0].State != "running" {
			c := cycles.Cycles[0]
			if c.State != "done" {
				t.Fatalf("first cycle as nobody with root's lock file: %s: %s", c.State, c.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no cycle ended within 60 s: %+v", cycles)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitServed(t, d, "65536")
}

// unhealthy is quasimctl status --json when it must exit 6: something is
// failing.
func (d *proc) unhealthy() api.Status {
	d.t.Helper()
	out, errs, code := d.ctl("status", "--json")
	var st api.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 6 {
		d.t.Fatalf("status --json: exit %d (want 6), %v\n%s%s", code, err, out, errs)
	}
	return st
}

func chownAll(t *testing.T, root string, uid int) {
	t.Helper()
	err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

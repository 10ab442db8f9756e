package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// service is the uid and gid the service runs as in these tests (nobody).
const service = 65534

// serviceTree makes a folder that the service's uid can reach (0755 up to
// /tmp), holding a copy of quasimd it may run.
func serviceTree(t *testing.T) (dir, quasimd string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "qown")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	qd, _ := binaries(t)
	quasimd = filepath.Join(dir, "quasimd")
	src, err := os.Open(qd)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(quasimd, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	return dir, quasimd
}

// asService runs quasimd as the service's uid on state and locks under
// dir, as the unit's command line would, and returns its exit code and
// stderr if it exits, or -1 once it serves.
func asService(t *testing.T, quasimd, dir string) (int, string) {
	t.Helper()
	run := filepath.Join(dir, "run")
	os.MkdirAll(filepath.Join(run, "locks"), 0o755)
	os.Chown(run, service, service)
	os.Chown(filepath.Join(run, "locks"), service, service)
	cmd := exec.Command(quasimd, "--socket", filepath.Join(run, "q.sock"), "--state-dir", filepath.Join(dir, "state"),
		"--kernels", filepath.Join(dir, "kernels.d"), "--lock-dir", filepath.Join(run, "locks"), "--no-ceilings", "--idle-cpu", "0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: service, Gid: service}}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	os.Remove(filepath.Join(run, "q.sock")) // an earlier run's, killed: not this one serving
	return serveOrExit(t, cmd, filepath.Join(run, "q.sock"))
}

func ownerOf(t *testing.T, path string) (uint32, os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Uid, fi.Mode().Perm()
}

// Run as root on the service's state directory, quasimd and the salvage
// of docs/operators/state-file.md leave every file the service's user's,
// and the service then starts on it.
func TestOwnershipAsRoot(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("skipping: needs root to run quasimd as root and as another uid")
	}
	dir, quasimd := serviceTree(t)
	os.MkdirAll(filepath.Join(dir, "kernels.d"), 0o755)
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o700)
	os.Chown(state, service, service)

	// What an earlier run as root left, as the OpenCL kernel cache.
	os.MkdirAll(filepath.Join(state, "opencl-cache", "k"), 0o700)
	os.WriteFile(filepath.Join(state, "opencl-cache", "k", "prog.bin"), nil, 0o600)
	// quasimd as root (go run as root before the package was installed).
	d := startWith(t, dir, nil)
	d.stop()
	for _, f := range []string{"quasim.db", "issuer.key", "opencl-cache", "opencl-cache/k/prog.bin"} {
		if uid, _ := ownerOf(t, filepath.Join(state, f)); uid != service {
			t.Errorf("%s made by quasimd as root belongs to uid %d, want the state dir's %d", f, uid, service)
		}
	}

	// The salvage of state-file.md, as root.
	_, qc := binaries(t)
	if out, err := exec.Command(qc, "db", "salvage", "--state-dir", state, "--to", filepath.Join(state, "new.db")).CombinedOutput(); err != nil {
		t.Fatalf("quasimctl db salvage: %v\n%s", err, out)
	}
	if uid, mode := ownerOf(t, filepath.Join(state, "new.db")); uid != service || mode != 0o600 {
		t.Errorf("salvaged file: uid %d mode %o, want uid %d mode 600 as the file it replaces", uid, mode, service)
	}
	os.Rename(filepath.Join(state, "quasim.db"), filepath.Join(state, "quasim.db.damaged"))
	os.Rename(filepath.Join(state, "new.db"), filepath.Join(state, "quasim.db"))

	if code, log := asService(t, quasimd, dir); code != -1 {
		t.Errorf("quasimd as the service after the salvage: exit %d\n%s", code, tail(log, 3000))
	}
}

// A state file or lock file the service's user may not open is exit 78
// (not restarted by systemd) with the chown that cures it.
func TestUnreadableStateExit78(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("skipping: needs root to make files the service's uid may not open")
	}
	tests := []struct {
		name string
		want string // the chown suggested
	}{
		{"state file", "chown -R "},
		{"lock file", "chown "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, quasimd := serviceTree(t)
			os.MkdirAll(filepath.Join(dir, "kernels.d"), 0o755)
			os.Mkdir(filepath.Join(dir, "state"), 0o700)
			os.Chown(filepath.Join(dir, "state"), service, service)
			os.MkdirAll(filepath.Join(dir, "run", "locks"), 0o755)
			if tt.name == "lock file" {
				// Every class's lock file: the CPU's name depends on the machine.
				locks := filepath.Join(dir, "run", "locks")
				os.Chown(locks, service, service)
				code, log := asService(t, quasimd, dir) // makes them
				if code != -1 {
					t.Fatalf("first start: exit %d\n%s", code, log)
				}
				fs, _ := filepath.Glob(filepath.Join(locks, "*.lock"))
				if len(fs) == 0 {
					t.Fatal("no lock files made")
				}
				for _, f := range fs {
					os.Chown(f, 0, 0)
					os.Chmod(f, 0o600)
				}
			} else {
				// As root made it: 0600, root's.
				os.WriteFile(filepath.Join(dir, "state", "quasim.db"), nil, 0o600)
			}
			code, log := asService(t, quasimd, dir)
			if code != 78 {
				t.Fatalf("exit %d, want 78\n%s", code, tail(log, 3000))
			}
			if !strings.Contains(log, "permission denied") || !strings.Contains(log, "run: "+tt.want) {
				t.Errorf("stderr does not name the chown to run:\n%s", tail(log, 3000))
			}
			t.Logf("%s", lastLine(log))
		})
	}
}

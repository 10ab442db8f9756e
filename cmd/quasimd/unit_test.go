package main

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
)

// unitFile is the parts of quasimd.service that decide how the daemon
// starts: its command line, environment and the directories systemd makes.
type unitFile struct {
	execStart             []string
	env                   map[string]string
	runtimeDirs           []string // RuntimeDirectory=, relative to /run
	stateDirs, configDirs []string // relative to /var/lib and /etc
	watchdog              time.Duration
	addressFamilies       []string
	restartPrevent        []string // RestartPreventExitStatus=
}

// readUnit parses the [Service] section of a unit the way systemd reads the
// few settings quasimd depends on.
func readUnit(t *testing.T, path string) unitFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unitFile{env: map[string]string{}}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			section = line
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: line %q has no '='", path, line)
		}
		if section != "[Service]" {
			continue
		}
		switch k {
		case "ExecStart":
			u.execStart = strings.Fields(v)
		case "Environment":
			for _, w := range strings.Fields(v) {
				ek, ev, _ := strings.Cut(strings.Trim(w, `"`), "=")
				u.env[ek] = ev
			}
		case "RuntimeDirectory":
			u.runtimeDirs = append(u.runtimeDirs, strings.Fields(v)...)
		case "StateDirectory":
			u.stateDirs = append(u.stateDirs, strings.Fields(v)...)
		case "ConfigurationDirectory":
			u.configDirs = append(u.configDirs, strings.Fields(v)...)
		case "WatchdogSec":
			if u.watchdog, err = time.ParseDuration(v); err != nil {
				t.Fatalf("%s: WatchdogSec=%s: %v", path, v, err)
			}
		case "RestrictAddressFamilies":
			u.addressFamilies = strings.Fields(v)
		case "RestartPreventExitStatus":
			u.restartPrevent = append(u.restartPrevent, strings.Fields(v)...)
		}
	}
	return u
}

// TestUnitRestart: systemd does not restart quasimd every RestartSec when
// it exits with a code a restart cannot cure (a damaged state file, a bad
// flag in /etc/default/quasimd), and does restart it after a panic or a
// watchdog abort, on which the Go runtime exits 2.
func TestUnitRestart(t *testing.T) {
	t.Parallel()
	u := readUnit(t, filepath.Join("..", "..", "quasimd.service"))
	for _, code := range []int{exitConfig, exitDamaged} {
		if !contains(u.restartPrevent, strconv.Itoa(code)) {
			t.Errorf("RestartPreventExitStatus = %q, want %d in it", u.restartPrevent, code)
		}
	}
	if contains(u.restartPrevent, "2") {
		t.Errorf("RestartPreventExitStatus = %q: 2 is the Go runtime's exit after a panic or SIGABRT (the watchdog), which must restart", u.restartPrevent)
	}
	// The real binary on bad flags.
	qd, _ := binaries(t)
	for _, args := range [][]string{{"--idle-cpu", "lots"}, {"--finalists", "-1"}, {"--confirm-rounds", "0"}} {
		out, err := exec.Command(qd, args...).CombinedOutput()
		var ee *exec.ExitError
		// The first line: a flag that does not parse is followed by the usage of all.
		first, _, _ := strings.Cut(string(out), "\n")
		if !errors.As(err, &ee) || ee.ExitCode() != exitConfig || !strings.Contains(first, strings.TrimLeft(args[0], "-")) {
			t.Errorf("quasimd %s = %v: %s; want exit %d naming %s", strings.Join(args, " "), err, out, exitConfig, args[0])
		}
	}
}

// TestUnitEnvironment starts the real quasimd as quasimd.service would:
// its ExecStart with $FLAGS empty (no /etc/default/quasimd), the
// environment systemd gives a service (RUNTIME_DIRECTORY with both runtime
// directories, STATE_DIRECTORY, CONFIGURATION_DIRECTORY, NOTIFY_SOCKET,
// WATCHDOG_USEC; no XDG_RUNTIME_DIR) and a private, empty TMPDIR. The
// socket, store and lock files must land in the unit's directories and
// nothing in /tmp or $HOME.
func TestUnitEnvironment(t *testing.T) {
	t.Parallel()
	qd, qc := binaries(t)
	u := readUnit(t, filepath.Join("..", "..", "quasimd.service"))
	if len(u.execStart) == 0 || u.execStart[0] != "/usr/bin/quasimd" {
		t.Fatalf("ExecStart = %q, want /usr/bin/quasimd first", u.execStart)
	}
	if len(u.runtimeDirs) != 2 || u.runtimeDirs[1] != "lock/quasim" {
		t.Fatalf("RuntimeDirectory = %q, want the socket's and lock/quasim (/run/lock/quasim)", u.runtimeDirs)
	}
	if !contains(u.addressFamilies, "AF_INET") || !contains(u.addressFamilies, "AF_INET6") {
		t.Errorf("RestrictAddressFamilies = %q: --metrics-listen needs AF_INET and AF_INET6", u.addressFamilies)
	}

	// Socket paths are limited to 108 bytes: keep the root short.
	root, err := os.MkdirTemp("", "qu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	under := func(base string, rel []string) []string {
		var out []string
		for _, r := range rel {
			d := filepath.Join(root, base, r)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
		return out
	}
	run := under("run", u.runtimeDirs)
	state := under("var/lib", u.stateDirs)
	conf := under("etc", u.configDirs)
	tmp, home := under("tmp", []string{"."})[0], under("home", []string{"quasim"})[0]
	if err := os.MkdirAll(filepath.Join(conf[0], "kernels.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := "name: unitk\nevaluator: builtin:reduce\nproblems: [\"4096\"]\nschedule: \"@every 1h\"\nbudget: {evals: 2}\n"
	if err := os.WriteFile(filepath.Join(conf[0], "kernels.d", "unitk.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	nsock := filepath.Join(root, "notify")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: nsock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()

	env := map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": home, "USER": "quasim", "LOGNAME": "quasim", "TMPDIR": tmp,
		"RUNTIME_DIRECTORY":       strings.Join(run, ":"),
		"STATE_DIRECTORY":         strings.Join(state, ":"),
		"CONFIGURATION_DIRECTORY": strings.Join(conf, ":"),
		"NOTIFY_SOCKET":           nsock,
		"FLAGS":                   "", // EnvironmentFile=-/etc/default/quasimd is absent
	}
	if u.watchdog > 0 {
		env["WATCHDOG_USEC"] = strconv.FormatInt(u.watchdog.Microseconds(), 10)
	}
	for k, v := range u.env {
		env[k] = v
	}
	var args []string
	for _, w := range u.execStart[1:] {
		if strings.HasPrefix(w, "$") { // $VAR splits into words; unset or empty gives none
			args = append(args, strings.Fields(env[strings.Trim(w[1:], "{}")])...)
			continue
		}
		args = append(args, w)
	}
	cmd := exec.Command(qd, args...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("quasimd log:\n%s", tail(stderr.String(), 4000))
		}
	}()
	d := &proc{t: t, cmd: cmd, socket: filepath.Join(run[0], "quasimd.sock"), notify: notify, stderr: &stderr, exited: exited, quasimd: qd, quasimct: qc}
	if msg := d.readNotify(30 * time.Second); msg != "READY=1" {
		t.Fatalf("first sd_notify message %q, want READY=1", msg)
	}

	// The socket is the first runtime directory's; the specs are
	// CONFIGURATION_DIRECTORY's.
	if out, errs, code := d.ctl("kernels"); code != 0 || !strings.Contains(out, "unitk") {
		t.Errorf("quasimctl kernels: exit %d, want unitk from $CONFIGURATION_DIRECTORY/kernels.d listed:\n%s%s", code, out, errs)
	}
	// The store is STATE_DIRECTORY's.
	for _, f := range []string{"quasim.db", "issuer.key"} {
		if _, err := os.Stat(filepath.Join(state[0], f)); err != nil {
			t.Errorf("state: %v", err)
		}
	}
	// The device locks are the second runtime directory's (/run/lock/quasim),
	// made at start so that another user's flock(1) can open them.
	var devs api.Devices
	d.ctlJSON(&devs, "devices")
	if filepath.Dir(devs.CPU.Lock) != run[1] {
		t.Errorf("CPU lock file %q, want it in %s", devs.CPU.Lock, run[1])
	}
	if fi, err := os.Stat(devs.CPU.Lock); err != nil {
		t.Errorf("CPU lock file before any measurement: %v", err)
	} else if fi.Mode().Perm()&0o004 == 0 {
		t.Errorf("CPU lock file mode %v: other users cannot open it for flock", fi.Mode())
	}
	d.stop()
	// Nothing went to the private /tmp or to $HOME.
	for _, dir := range []string{tmp, home} {
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("%s holds %d entries after the run (first %s), want none", dir, len(ents), ents[0].Name())
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newcomerScript runs the README's quick start in a mount namespace of
// its own, so the service's paths (/run, /var/lib, /etc/quasim) are empty
// tmpfs and the host's are untouched: quasimd with its built-in defaults
// (no flags), then, as the tour does, quasimctl with no --socket until a
// first cycle is done (served and certified), and the README's curl line on the socket
// quasimctl socket names. As "user" it drops to uid 65534 with a home and
// a runtime dir of its own. QUASIMD_IDLE_CPU=0: the tests around it load
// the CPU, and the quick start says to turn the gate off on a busy machine.
const newcomerScript = `
set -eu
bin=$1 mode=$2
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /var/lib
if [ -d /etc/quasim ]; then mount -t tmpfs tmpfs /etc/quasim; fi
if [ "$mode" = user ]; then
	home=$(mktemp -d)
	chown 65534:65534 "$home"
	mkdir -p /run/user/65534 && chown 65534:65534 /run/user/65534 && chmod 0700 /run/user/65534
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME="$home" XDG_RUNTIME_DIR=/run/user/65534 QUASIMD_IDLE_CPU=0)
else
	as=(env QUASIMD_IDLE_CPU=0)
fi
as() { "${as[@]}" "$@"; }
# A simple command in the background: $! is quasimd itself.
"${as[@]}" "$bin/quasimd" --log-level error &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
served=
for i in $(seq 1 600); do
	if out=$(as "$bin/quasimctl" status --json 2>/dev/null) && echo "$out" | grep -q '"last_success"'; then
		served=1
		break
	fi
	sleep 0.2
done
[ -n "$served" ] || { echo "no cycle done within 120 s"; exit 1; }
sock=$(as "$bin/quasimctl" socket)
echo "socket: $sock"
echo "curl: $(as curl -sf --unix-socket "$sock" 'http://quasimd/v1/configs/sgemm?problem=256,256,256')"
as "$bin/quasimctl" status >/dev/null && echo "status: healthy"
kill -TERM $pid
wait $pid && echo "quasimd: exit 0"
`

// The README's two commands, as a newcomer runs them, as root and as a
// user: the daemon starts with its built-in defaults, finishes a first
// cycle, and the README's curl line reaches it through quasimctl socket
// (sgemm 256³ may be answered from its nearest or its default while its
// own cycle waits for its turn on the CPU).
func TestNewcomerQuickStart(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("skipping: needs root for a mount namespace over /run and /var/lib")
	}
	for _, tool := range []string{"unshare", "setpriv", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: no %s", tool)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go run ./cmd/quasimd     #", "go test -timeout 30m ./...   #",
		`curl --unix-socket "$(go run ./cmd/quasimctl socket)" 'http://quasimd/v1/configs/sgemm?problem=256,256,256'`} {
		if !strings.Contains(string(readme), want) {
			t.Fatalf("README.md no longer says %q: change this test with it", want)
		}
	}
	qd, qc := binaries(t)
	bin, err := os.MkdirTemp("", "qn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	os.Chmod(bin, 0o755)
	for _, b := range []string{qd, qc} {
		data, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, filepath.Base(b)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for mode, sock := range map[string]string{"root": "/run/quasim/quasimd.sock", "user": "/run/user/65534/quasim/quasimd.sock"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel() // each in a namespace of its own
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "bash", "-c", newcomerScript, "bash", bin, mode)
			cmd.WaitDelay = 10 * time.Second // a daemon left behind must not hold the output open
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("quick start as %s: %v\n%s", mode, err, out)
			}
			for _, want := range []string{"socket: " + sock + "\n", `"kernel":"sgemm","problem":"256,256,256"`, `"match":"`, "status: healthy\n", "quasimd: exit 0\n"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("quick start as %s: no %q in\n%s", mode, want, out)
				}
			}
		})
	}
}

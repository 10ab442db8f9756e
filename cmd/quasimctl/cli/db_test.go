package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDBWithoutQuasimd: quasimctl db needs quasimd; without one beside it
// or on $PATH it says so and fails.
func TestDBWithoutQuasimd(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"db", "check"}, &out, &errb)
	if code != exitError || !strings.Contains(errb.String(), "quasimd not found") {
		t.Errorf("quasimctl db check without quasimd: exit %d, %q", code, errb.String())
	}
}

// db checks the state file of the daemon quasimctl talks to, unless the
// arguments or $QUASIMD_STATE_DIR name one.
func TestDBDaemonStateDir(t *testing.T) {
	f := newFakeDaemon(t)
	t.Setenv("QUASIM_SOCKET", f.sock)
	ctx := context.Background()
	if got := daemonStateDir(ctx, []string{"check"}); len(got) != 2 || got[0] != "--state-dir" || got[1] != fakeStatus.StateDir {
		t.Errorf("check = %q, want --state-dir %s", got, fakeStatus.StateDir)
	}
	for _, args := range [][]string{{"check", "--db", "x"}, {"check", "-state-dir=y"}, {"salvage", "--db=x", "--to", "z"}} {
		if got := daemonStateDir(ctx, args); got != nil {
			t.Errorf("%q = %q, want nothing added", args, got)
		}
	}
	t.Setenv("QUASIMD_STATE_DIR", "/elsewhere")
	if got := daemonStateDir(ctx, []string{"check"}); got != nil {
		t.Errorf("with $QUASIMD_STATE_DIR = %q, want nothing added", got)
	}
}

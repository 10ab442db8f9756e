package cli

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Each command is listed once: causal was added twice and --help showed it
// twice.
func TestCommandsListedOnce(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		seen := map[string]bool{}
		for _, sub := range c.Commands() {
			if seen[sub.Name()] {
				t.Errorf("%s lists %s twice", c.CommandPath(), sub.Name())
			}
			seen[sub.Name()] = true
			walk(sub)
		}
	}
	walk(Command())
	out, _, _ := runCtx(context.Background(), "--help")
	if n := strings.Count(out, "\n  causal "); n != 1 {
		t.Errorf("quasimctl --help lists causal %d times:\n%s", n, out)
	}
}

// quasimctl socket prints the socket the other commands would use.
func TestSocketCommand(t *testing.T) {
	want := func(args []string, w string) {
		t.Helper()
		out, errs, code := runCtx(context.Background(), args...)
		if code != 0 || out != w+"\n" {
			t.Errorf("quasimctl %s = %q, %d (stderr %q), want %q", strings.Join(args, " "), out, code, errs, w)
		}
	}
	want([]string{"socket", "--socket", "/x/y.sock"}, "/x/y.sock")
	t.Setenv("QUASIM_SOCKET", "/from/env.sock")
	want([]string{"socket"}, "/from/env.sock")

	// Without either: the user's own daemon's socket when one answers
	// there, else the service's.
	user := filepath.Join(t.TempDir(), "quasimd.sock")
	const system = "/run/quasim/quasimd.sock"
	if got := answering([]string{user, system}); got != system {
		t.Errorf("no daemon at %s: answering = %s, want %s", user, got, system)
	}
	l, err := net.Listen("unix", user)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := answering([]string{user, system}); got != user {
		t.Errorf("a daemon at %s: answering = %s, want it", user, got)
	}
}

// quasimctl version prints its own version, and the daemon's when one
// answers; without a daemon it still exits 0.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	out, errs, code := f.ctl(t, "version")
	if code != 0 || !strings.HasPrefix(out, "quasimctl ") || !strings.Contains(out, "quasimd   v9\n") {
		t.Errorf("version = %d %q (stderr %q), want both versions", code, out, errs)
	}
	out, _, code = runCtx(context.Background(), "--socket", filepath.Join(t.TempDir(), "none.sock"), "version")
	if code != 0 || !strings.Contains(out, "quasimd   (no answer:") {
		t.Errorf("version without a daemon = %d %q, want 0 and no answer", code, out)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/cmd/quasimctl/cli"
)

// quasimctl(1) has an EXIT STATUS section with every code of --help, and
// its --socket default is the rule, not the path of whoever built it
// (root's builds named /run/quasim/quasimd.sock as the user's too).
func TestQuasimctlPage(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/4242")
	dir := t.TempDir()
	if err := quasimctlPages(cli.Command(), "1.2.3", time.Unix(0, 0).UTC(), dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "quasimctl.1"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if strings.Contains(page, "4242") {
		t.Errorf("quasimctl.1 names the builder's socket %s", client.UserSocket())
	}
	// The rule's words, which no machine's path has.
	if !strings.Contains(page, "XDG_RUNTIME_DIR") || !strings.Contains(page, "quasim-UID") {
		t.Errorf("quasimctl.1 does not give the user socket's rule:\n%s", page)
	}
	sec, _, ok := strings.Cut(page[strings.Index(page, ".SH EXIT STATUS")+1:], ".SH")
	if !strings.Contains(page, ".SH EXIT STATUS") || !ok {
		t.Fatalf("quasimctl.1 has no EXIT STATUS section before another:\n%s", page)
	}
	for _, code := range []string{"0", "1", "2", "3", "4", "5", "6", "130"} {
		if !strings.Contains(sec, `\fB`+code+`\fR`) {
			t.Errorf("EXIT STATUS lacks %s:\n%s", code, sec)
		}
	}
}

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/fleet"
	"github.com/quasim/quasim/fleet/fleettest"
	"github.com/quasim/quasim/internal/testload"
)

// restartSpec is fleetSpec with two problems: enough to see a job tuned
// apart from the fleet, and quick.
const restartSpec = `name: reduce
evaluator: builtin:reduce
problems: [16384, 65536]
schedule: "@every 24h"
budget: {evals: 4}
`

// A follower serving the fleet's configs, restarted with the cluster in
// reach and then with it out of reach (the real binary's start order),
// serves the same certificates from its first answer on and tunes
// nothing for itself (TestFleetPartitions saw both go wrong).
func TestFleetFollowerRestarts(t *testing.T) {
	t.Parallel()
	binaries(t)
	cl := fleettest.Start(t, 1)
	dirA := newDir(t, map[string]string{"reduce.yaml": restartSpec})
	trust, issuer := trustKeyOf(t, dirA)
	args := []string{"--fleet", strings.Join(cl.URLs(), ","), "--fleet-name", "rtest"}
	dirB := newDir(t, map[string]string{"reduce.yaml": restartSpec})
	bArgs := append(args, "--fleet-trust", trust, "--fleet-wait", "10m")
	b := start(t, dirB, bArgs...)
	a := start(t, dirA, append(args, "--fleet-trust", filepath.Join(t.TempDir(), "none"))...)
	problems := []string{"16384", "65536"}
	want := map[string]string{}
	for _, p := range problems {
		want[p] = waitServedKernel(t, a, "reduce", p).Certificate
		waitConfig(t, &client.Client{Socket: b.socket}, "reduce", p, func(c api.Config) bool {
			return c.Source == api.SourceFleet && c.Certificate == want[p] && c.Verification == api.VerifyPassed
		})
	}

	// check samples b's answers: the default until its kept offers are
	// live (held back until the fleet replays them or is found out of
	// reach), then for d only a's certificates; b runs no cycle of its own.
	check := func(what string, b *proc, d time.Duration) {
		t.Helper()
		c := &client.Client{Socket: b.socket}
		n, started := 0, time.Now()
		var first time.Duration
		live := map[string]bool{} // problems answered from the fleet already
		for end := time.Now().Add(d); first == 0 || time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			for _, p := range problems {
				cfg, err := c.Config(context.Background(), "reduce", p, "")
				if err != nil {
					t.Fatalf("%s: config at %s: %v", what, p, err)
				}
				n++
				ok := cfg.Source == api.SourceFleet && cfg.Certificate == want[p] && cfg.Issuer == issuer
				switch {
				case ok && first == 0:
					first = time.Since(started)
					end = time.Now().Add(d)
					live[p] = true
				case ok:
					live[p] = true
				// Each problem's kept offer goes live as the fleet replays
				// it, not all at the same instant: until then, the default.
				case !live[p] && cfg.Match == api.MatchDefault && time.Since(started) < fleet.HoldRestored+testload.Scale(5*time.Second):
				default:
					t.Fatalf("%s: answer %d at %s is %s (certificate %.12q, source %q, match %s); want a's %.12s; log:\n%s", what, n, p, cfg.Key, cfg.Certificate, cfg.Source, cfg.Match, want[p], b.stderr)
				}
			}
		}
		cy, err := c.Cycles(context.Background(), "reduce")
		if err != nil {
			t.Fatal(err)
		}
		if len(cy.Cycles) != 0 {
			t.Fatalf("%s: b ran %d cycles of its own; it should serve the fleet's configs", what, len(cy.Cycles))
		}
		t.Logf("%s: a's certificates served %.3f s after the restart's first answer, then %s; %d answers, no cycle of b's own", what, first.Seconds(), d, n)
	}

	b.stop()
	b = start(t, dirB, bArgs...)
	check("restarted with the cluster", b, 5*time.Second)

	b.stop()
	cl.Stop()
	b = start(t, dirB, bArgs...)
	check("restarted without the cluster", b, 3*time.Second)
	b.stop()
	a.stop()
}

package main

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/fleet/fleettest"
)

// fleetProblems are the jobs the fleet test tunes on one node.
var fleetProblems = []string{"16384", "24576", "32768", "40960", "49152", "57344", "65536", "73728"}

const fleetSpec = `name: reduce
evaluator: builtin:reduce
problems: [16384, 24576, 32768, 40960, 49152, 57344, 65536, 73728]
schedule: "@every 24h"
budget: {evals: 4}
`

// seen is when a follower first served a fleet config, and which.
type seen struct {
	at   time.Time
	cert string
	cfg  api.Config
}

// Three real quasimd of one device class on a real 3-server JetStream
// cluster: one tunes, the two others serve its certified configs from the
// fleet without tuning, say so (source fleet, its issuer), and verify each
// locally. One NATS server dies while the tuner publishes. The delay from
// each promotion to a follower serving it is logged (p50, p99).
func TestFleetServesCertifiedConfigs(t *testing.T) {
	binaries(t)
	cl := fleettest.Start(t, 3)
	dirA := newDir(t, map[string]string{"reduce.yaml": fleetSpec})
	key, _, err := certs.LoadOrCreateKey(filepath.Join(dirA, "state", "issuer.key"))
	if err != nil {
		t.Fatal(err)
	}
	trust := filepath.Join(t.TempDir(), "trust.d")
	os.MkdirAll(trust, 0o755)
	if err := os.WriteFile(filepath.Join(trust, "a.pub"), []byte(certs.FormatPublicKey(key.Public().(ed25519.PublicKey))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fleetArgs := []string{"--fleet", strings.Join(cl.URLs(), ","), "--fleet-name", "itest", "--fleet-replicas", "3"}
	var followers []*proc
	for range 2 {
		d := start(t, newDir(t, map[string]string{"reduce.yaml": fleetSpec}),
			append(fleetArgs, "--fleet-trust", trust, "--fleet-wait", "10m")...)
		followers = append(followers, d)
	}

	// Each follower long-polls every problem until it serves a fleet config.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var mu sync.Mutex
	first := map[[2]int]seen{}
	var wg sync.WaitGroup
	for fi, d := range followers {
		c := &client.Client{Socket: d.socket}
		for pi, p := range fleetProblems {
			wg.Go(func() {
				etag := ""
				for ctx.Err() == nil {
					cfg, tag, changed, err := c.WatchConfig(ctx, "reduce", p, "", etag, 30*time.Second)
					at := time.Now()
					if err != nil {
						if ctx.Err() == nil {
							t.Errorf("follower %d problem %s: %v", fi, p, err)
						}
						return
					}
					if changed && cfg.Source == api.SourceFleet && cfg.Certificate != "" {
						mu.Lock()
						first[[2]int{fi, pi}] = seen{at: at, cert: cfg.Certificate, cfg: cfg}
						mu.Unlock()
						return
					}
					etag = tag
				}
			})
		}
	}

	// An R3 bucket needs all three servers to be created: only once it is
	// does one die, while the tuner publishes.
	cl.WaitBucket(t, "quasim-fleet-itest", 30*time.Second)
	a := start(t, dirA, append(fleetArgs, "--fleet-trust", filepath.Join(t.TempDir(), "none"))...)
	cl.Kill(1)
	ca := &client.Client{Socket: a.socket}
	promoted := map[string]api.Config{}
	for _, p := range fleetProblems {
		promoted[p] = waitServedKernel(t, a, "reduce", p)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var lat []time.Duration
	for fi := range followers {
		for pi, p := range fleetProblems {
			s, ok := first[[2]int{fi, pi}]
			want := promoted[p]
			if !ok {
				t.Fatalf("follower %d never served problem %s from the fleet", fi, p)
			}
			if s.cert != want.Certificate || s.cfg.Key != want.Key || s.cfg.Issuer != certs.KeyID(key.Public().(ed25519.PublicKey)) ||
				s.cfg.Match != api.MatchExact {
				t.Fatalf("follower %d at %s served %+v; want the tuner's %s (%s) with its issuer", fi, p, s.cfg, want.Certificate, want.Key)
			}
			lat = append(lat, s.at.Sub(*want.PromotedAt))
		}
	}
	slices.Sort(lat)
	q := func(f float64) time.Duration { return lat[min(len(lat)-1, int(f*float64(len(lat))))] }
	t.Logf("fleet promotion to serving on a follower: n=%d p50=%s p99=%s max=%s (one of 3 NATS servers down)", len(lat), q(0.50), q(0.99), lat[len(lat)-1])

	// Each follower verifies each config here, and tunes nothing itself.
	for fi, d := range followers {
		c := &client.Client{Socket: d.socket}
		for _, p := range fleetProblems {
			deadline := time.Now().Add(60 * time.Second)
			for {
				cfg, err := c.Config(context.Background(), "reduce", p, "")
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Source != api.SourceFleet {
					t.Fatalf("follower %d at %s: source %q, want fleet: %+v", fi, p, cfg.Source, cfg)
				}
				if cfg.Verification == api.VerifyPassed {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("follower %d at %s: verification %q after 60s", fi, p, cfg.Verification)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		cy, err := c.Cycles(context.Background(), "reduce")
		if err != nil {
			t.Fatal(err)
		}
		if len(cy.Cycles) != 0 {
			t.Errorf("follower %d ran %d cycles, want none: it serves the fleet's configs", fi, len(cy.Cycles))
		}
	}
	if _, err := ca.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, d := range append(followers, a) {
		d.stop()
	}
}

package runtime_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/daemon"
	"github.com/quasim/quasim/runtime"
)

const reduceSpec = `name: reduce
evaluator: builtin:reduce
problems: ["65536"]
schedule: "@every 1h"
budget: {evals: 6}
`

var defaults = map[string]any{"block": 1024}

// startDaemon runs the real daemon in-process on a real Unix socket with a
// small reduce spec, and returns its socket and a stop func.
func startDaemon(t testing.TB) (string, func()) {
	t.Helper()
	return startDaemonFiles(t, nil)
}

// startDaemonFiles is startDaemon with more files (name: content) in the
// spec dir.
func startDaemonFiles(t testing.TB, files map[string]string) (string, func()) {
	t.Helper()
	dir := t.TempDir()
	kd := filepath.Join(dir, "kernels.d")
	if err := os.MkdirAll(kd, 0o755); err != nil {
		t.Fatal(err)
	}
	files = maps.Clone(files)
	if files == nil {
		files = map[string]string{}
	}
	files["reduce.yaml"] = reduceSpec
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(kd, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sockDir, err := os.MkdirTemp("", "qrt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "q.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Config{Socket: sock, StateDir: filepath.Join(dir, "state"), KernelsDir: kd, ShutdownTimeout: 5 * time.Second, Seed: 1}, nil, zerolog.Nop())
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("daemon: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	// Wait for the first cycle to serve a config.
	c := &client.Client{Socket: sock}
	deadline := time.Now().Add(60 * time.Second)
	for {
		cfg, err := c.Config(context.Background(), "reduce", "65536", "")
		if err == nil && cfg.Match == api.MatchExact && cfg.Certificate != "" {
			return sock, stop
		}
		if time.Now().After(deadline) {
			t.Fatalf("no certified config served within 60s: %+v %v", cfg, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestLookup(t *testing.T) {
	sock, stop := startDaemon(t)
	var outages []string
	rt := runtime.New(runtime.Options{Socket: sock, TTL: time.Hour, OnFallback: func(why string) { outages = append(outages, why) }})
	ctx := context.Background()
	res := rt.Lookup(ctx, "reduce", []int{65536}, defaults)
	if res.Reason != "" || res.Match != api.MatchExact || res.Certificate == "" || res.Key == "" || len(res.Config) != 5 {
		t.Fatalf("Lookup = %+v, want the served, certified config", res)
	}
	want, err := (&client.Client{Socket: sock}).Config(ctx, "reduce", "65536", "")
	if err != nil || want.Key != res.Key {
		t.Fatalf("daemon serves %q (%v), Lookup said %q", want.Key, err, res.Key)
	}
	// An untuned problem size: the nearest tuned one answers.
	near := rt.Lookup(ctx, "reduce", []int{70000}, defaults)
	if near.Match != api.MatchNearest || near.FromProblem != "65536" || near.Key != res.Key || near.CertifiedFor != "65536" {
		t.Errorf("Lookup(70000) = %+v, want nearest from 65536, certified for 65536", near)
	}
	unknown := rt.Lookup(ctx, "nope", []int{1}, defaults)
	if unknown.Match != "" || unknown.Config["block"] != 1024 || !strings.Contains(unknown.Reason, "nope") {
		t.Errorf("Lookup(unknown kernel) = %+v, want the defaults and why", unknown)
	}
	// Every lookup answered with the defaults counts; the hook hears of
	// the first one of each run of them.
	rt.Lookup(ctx, "nope", []int{1}, defaults)
	rt.Lookup(ctx, "nope", []int{2}, defaults)
	if st := rt.Stats(); st.Fallbacks != 3 || !strings.Contains(st.Reason, "nope") || len(outages) != 1 || !strings.Contains(outages[0], "nope") {
		t.Errorf("after 3 fallbacks: Stats() = %+v, OnFallback calls %q; want 3 and one call", st, outages)
	}
	rt.Lookup(ctx, "reduce", []int{65537}, defaults)
	rt.Lookup(ctx, "nope", []int{3}, defaults)
	if st := rt.Stats(); st.Fallbacks != 4 || len(outages) != 2 {
		t.Errorf("fallback after an answer: Stats() = %+v, OnFallback calls %q; want 4 and a second call", st, outages)
	}
	if err := rt.Report(ctx, "reduce", []int{65536}, res.Key, []float64{0.01, 0.02}); err != nil {
		t.Errorf("Report: %v", err)
	}
	if err := rt.Report(ctx, "reduce", []int{65536}, "not,a,key", []float64{1}); err == nil {
		t.Error("Report of a key outside the space succeeded")
	}
	// Cached: the answer survives the daemon.
	stop()
	again := rt.Lookup(ctx, "reduce", []int{65536}, defaults)
	if again.Key != res.Key || again.Reason != "" {
		t.Errorf("cached Lookup after the daemon stopped = %+v, want %s", again, res.Key)
	}
}

// With no daemon, a lookup returns the defaults and why within its
// deadline, and later lookups do not wait again.
func TestLookupDaemonDown(t *testing.T) {
	t.Parallel()
	rt := runtime.New(runtime.Options{Socket: filepath.Join(t.TempDir(), "none.sock"), Timeout: 20 * time.Millisecond})
	for i := range 3 {
		start := time.Now()
		res := rt.Lookup(context.Background(), "reduce", []int{65536}, defaults)
		if took := time.Since(start); took > 20*time.Millisecond+50*time.Millisecond {
			t.Errorf("lookup %d took %s, deadline 20ms", i, took)
		}
		if res.Config["block"] != 1024 || res.Match != "" || !strings.Contains(res.Reason, "unavailable") {
			t.Fatalf("lookup %d = %+v, want the defaults, unavailable", i, res)
		}
	}
	if st := rt.Stats(); st.Fallbacks != 3 || !strings.Contains(st.Reason, "none.sock") {
		t.Errorf("Stats() = %+v, want 3 fallbacks, the reason naming the socket", st)
	}
}

// Watch hot-swaps: when the served certificate is revoked, the daemon
// serves another config and the watcher sees it without asking.
func TestWatchHotSwaps(t *testing.T) {
	sock, _ := startDaemon(t)
	rt := runtime.New(runtime.Options{Socket: sock, TTL: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan runtime.Result, 8)
	go rt.Watch(ctx, "reduce", []int{65536}, func(r runtime.Result) { got <- r })
	var first runtime.Result
	select {
	case first = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch delivered no first answer")
	}
	c := &client.Client{Socket: sock}
	if _, err := c.Revoke(ctx, first.Certificate, "test: hot swap"); err != nil {
		t.Fatal(err)
	}
	select {
	case next := <-got:
		if next.Certificate == first.Certificate {
			t.Fatalf("after revoking %s Watch delivered the same certificate", first.Certificate)
		}
		if l := rt.Lookup(ctx, "reduce", []int{65536}, defaults); l.Key != next.Key || l.Certificate != next.Certificate {
			t.Errorf("Lookup after the swap = %+v, want %+v", l, next)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Watch saw no change within 30s of the revocation")
	}
}

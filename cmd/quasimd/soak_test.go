package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
)

// lookupCount is how many lookups TestLookupsDuringCycle makes in all:
// QUASIM_LOOKUPS, or 20,000 (a few seconds on a 2-core machine).
func lookupCount(t *testing.T) int {
	n := 20000
	if s := os.Getenv("QUASIM_LOOKUPS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 8 {
			t.Fatalf("QUASIM_LOOKUPS=%q: want a count of at least 8", s)
		}
		n = v
	}
	return n
}

// TestLookupsDuringCycle is the lookup soak of docs/evidence/reliability.md's
// table: 8 clients, each with its own connection, look configs up on the
// real socket (exact hits, nearest-size misses and lookups of a job that
// has nothing served yet) while a builtin job is being tuned. Every lookup
// must answer, and the exact hits must answer the served config; p50 and
// p99 are logged. QUASIM_LOOKUPS=1000000 runs the full soak.
func TestLookupsDuringCycle(t *testing.T) {
	t.Parallel()
	total := lookupCount(t)
	d := start(t, newDir(t, map[string]string{"reduce.yaml": reduceSpec}))
	served := waitServed(t, d, "65536")
	// The tuning that runs meanwhile: a job whose budget (an hour, no limit
	// on evaluations) and space (over 1,000 configs at about 0.5 s each)
	// outlast the soak.
	tuned := "name: sgemm\nevaluator: builtin:sgemm\nproblems: [\"384,384,384\"]\nschedule: \"@every 24h\"\nbudget: {evals: 0, seconds: 3600}\n"
	if err := os.WriteFile(filepath.Join(d.dir, "kernels.d", "sgemm.yaml"), []byte(tuned), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := &client.Client{Socket: d.socket}
	if _, err := admin.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	running := func() api.Cycle {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			cs, err := admin.Cycles(ctx, "sgemm")
			if err != nil {
				t.Fatal(err)
			}
			if n := len(cs.Cycles); n > 0 && cs.Cycles[n-1].State == "running" && cs.Cycles[n-1].Evals > 0 {
				return cs.Cycles[n-1]
			}
			if time.Now().After(deadline) {
				t.Fatalf("no running sgemm cycle within 60s: %+v", cs.Cycles)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	before := running()

	type query struct{ kernel, problem string }
	queries := []query{
		{"reduce", "65536"},         // exact hit
		{"reduce", "70000"},         // nearest size
		{"reduce", "1024"},          // nearest size, far
		{"sgemm", "128,128,128"},    // the job being tuned
		{"sgemm", "100,200,300"},    // nothing near: nearest or default
		{"reduce", "65536"},         // exact hit again, so half are hits
		{"reduce", "65536"},         //
		{"sgemm", "4096,4096,4096"}, // nothing near: nearest or default
	}
	const clients = 8
	per := total / clients
	var errs atomic.Int64
	var firstErr atomic.Value
	lat := make([][]time.Duration, clients)
	matches := make([]map[api.Match]int, clients)
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := range clients {
		wg.Go(func() {
			c := &client.Client{Socket: d.socket}
			ls := make([]time.Duration, 0, per)
			ms := map[api.Match]int{}
			for i := range per {
				q := queries[(w+i)%len(queries)]
				s := time.Now()
				cfg, err := c.Config(ctx, q.kernel, q.problem, "")
				ls = append(ls, time.Since(s))
				if err == nil && q.kernel == "reduce" && q.problem == "65536" && (cfg.Match != api.MatchExact || cfg.Key != served.Key) {
					err = fmt.Errorf("exact hit answered %s %s, want exact %s", cfg.Match, cfg.Key, served.Key)
				}
				if err == nil && cfg.Key == "" {
					err = fmt.Errorf("%s at %s: answer without a config", q.kernel, q.problem)
				}
				if err != nil {
					if errs.Add(1) == 1 {
						firstErr.Store(err)
					}
					continue
				}
				ms[cfg.Match]++
			}
			lat[w], matches[w] = ls, ms
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	after := running()

	all := slices.Concat(lat...)
	slices.Sort(all)
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	byMatch := map[api.Match]int{}
	for _, ms := range matches {
		for m, n := range ms {
			byMatch[m] += n
		}
	}
	t.Logf("%d lookups by %d clients in %s (%.0f/s) during sgemm cycle %d (evaluations %d -> %d): %d errors; p50 %s, p99 %s, max %s; answers by match %v",
		len(all), clients, wall.Round(time.Millisecond), float64(len(all))/wall.Seconds(), after.ID, before.Evals, after.Evals,
		errs.Load(), pct(0.50), pct(0.99), all[len(all)-1], byMatch)
	if n := errs.Load(); n > 0 {
		t.Errorf("%d of %d lookups failed; first: %v", n, len(all), firstErr.Load())
	}
	// One evaluation may outlast a short soak, so the evaluations need
	// not have moved; the cycle must have been running throughout.
	if after.ID != before.ID {
		t.Errorf("sgemm cycle %d running before the lookups, %d after: the lookups did not run during one tuning cycle", before.ID, after.ID)
	}
	d.stop()
}

package fleet

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/fleet/fleettest"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/strategies"
)

// scaleSpaces are the recorded spaces the scale simulation replays, one
// device class each: one kernel on four GPUs.
var scaleSpaces = []string{"convolution_milo_A100", "convolution_milo_A4000", "convolution_milo_A6000", "convolution_milo_A100_T4"}

type simClass struct {
	name    string
	rec     *replay.Recording
	space   *genome.Space
	optimum float64
}

// tune tunes c with the daemon's default strategy from seed, warm
// from prior, until a config within 95% of the optimum is found; it
// returns the evaluations, the key found, what it measured and the
// recorded seconds the measurements took.
func (c *simClass) tune(seed uint64, prior []genome.Config) (int, string, []evolve.Result, float64) {
	f, _ := strategies.Get(strategies.Default)
	s := f(c.space, seed)
	if ws, ok := s.(evolve.WarmStarter); ok && len(prior) > 0 {
		ws.WarmStart(prior)
	}
	best, bestKey, cost := 0.0, "", 0.0
	var told []evolve.Result
	for n := 0; ; {
		cfgs, err := s.Ask(1)
		if err != nil || len(cfgs) == 0 {
			return n, bestKey, told, cost
		}
		var rs []evolve.Result
		for _, cfg := range cfgs {
			t, _ := c.rec.Evaluate(context.Background(), cfg, evaluate.Problem{})
			n++
			cost += t.Cost
			r := evolve.Result{Config: cfg, OK: t.OK(), Value: t.Time}
			rs = append(rs, r)
			if t.OK() && (bestKey == "" || t.Time < best) {
				best, bestKey = t.Time, c.space.Key(cfg)
			}
		}
		told = append(told, rs...)
		s.Tell(rs)
		if bestKey != "" && c.optimum/best >= 0.95 {
			return n, bestKey, told, cost
		}
	}
}

// The scale simulation (QUASIM_FLEET_SCALE=1,10,100,1000 go test ./fleet
// -run TestScale -v): N simulated nodes over four device classes, each a
// real NATS client of an embedded 3-server cluster. Alone, every node
// tunes its class's recorded space to 95% of the optimum. In the fleet,
// the first node of each class tunes (warm from the classes tuned before
// it, by rank transfer), publishes its certified config, and every other
// node serves it once its offer arrives, after one evaluation to verify
// it. Reported: evaluations fleet-wide and wall time until every node
// serves, against every node tuning alone.
func TestScaleSimulation(t *testing.T) {
	ns := os.Getenv("QUASIM_FLEET_SCALE")
	if ns == "" {
		t.Skip("set QUASIM_FLEET_SCALE=1,10,100,1000 to run the scale simulation")
	}
	var classes []*simClass
	for _, n := range scaleSpaces {
		rec, err := replay.Load(filepath.Join("..", "..", "shared", "spaces", n+".json.gz"))
		if err != nil {
			t.Skipf("recorded spaces not found: %v", err)
		}
		sp, err := rec.Space(evaluate.Problem{})
		if err != nil {
			t.Fatal(err)
		}
		opt, _ := rec.Optimum()
		classes = append(classes, &simClass{name: n, rec: rec, space: sp, optimum: opt})
	}
	// Evaluations alone, per class and seed, cached: node i of class c
	// tunes with seed i.
	type run struct {
		evals int
		cost  float64
	}
	var mu sync.Mutex
	alone := map[[2]int]run{}
	aloneEvals := func(c, seed int) (int, float64) {
		mu.Lock()
		r, ok := alone[[2]int{c, seed}]
		mu.Unlock()
		if !ok {
			r.evals, _, _, r.cost = classes[c].tune(uint64(seed), nil)
			mu.Lock()
			alone[[2]int{c, seed}] = r
			mu.Unlock()
		}
		return r.evals, r.cost
	}
	for _, f := range strings.Split(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("QUASIM_FLEET_SCALE %q: want node counts such as 1,10,100,1000", ns)
		}
		t.Run(fmt.Sprintf("%d nodes", n), func(t *testing.T) { scaleRun(t, classes, n, aloneEvals) })
	}
}

// scaleRun simulates n nodes, node i of class i mod len(classes).
func scaleRun(t *testing.T, classes []*simClass, n int, aloneEvals func(c, seed int) (int, float64)) {
	k := min(n, len(classes))
	// Alone: every node tunes its class from its own seed, in parallel.
	var aloneTotal int
	var aloneMax float64
	{
		type res struct {
			evals int
			cost  float64
		}
		out := make([]res, n)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 2)
		for i := range n {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				e, c := aloneEvals(i%len(classes), i)
				out[i] = res{e, c}
			})
		}
		wg.Wait()
		for _, r := range out {
			aloneTotal += r.evals
			aloneMax = max(aloneMax, r.cost)
		}
	}

	// The fleet: n real clients.
	cl := fleettest.Start(t, 3)
	keys := make([]ed25519.PrivateKey, n)
	pubs := make([]ed25519.PublicKey, n)
	for i := range n {
		var seed [32]byte
		binary.LittleEndian.PutUint64(seed[:], uint64(i)+1)
		keys[i] = ed25519.NewKeyFromSeed(seed[:])
		pubs[i] = keys[i].Public().(ed25519.PublicKey)
	}
	trust := NewTrust(pubs...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients := make([]*Client, n)
	changed := make([]chan struct{}, n)
	var run sync.WaitGroup
	defer run.Wait()
	defer cancel()
	tJoin := time.Now()
	sem := make(chan struct{}, 32)
	var joined sync.WaitGroup
	for i := range n {
		changed[i] = make(chan struct{}, 1)
		c, err := New(Config{URLs: cl.URLs(), Name: "scale", Key: keys[i], Trust: trust, Replicas: 3,
			OnChange: func(JobID) {
				select {
				case changed[i] <- struct{}{}:
				default:
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
		joined.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			run.Go(func() { c.Run(ctx) })
			select {
			case <-c.Ready():
			case <-time.After(120 * time.Second):
				t.Errorf("node %d not ready in 120s", i)
			}
		})
	}
	joined.Wait()
	if t.Failed() {
		return
	}
	joinTime := time.Since(tJoin)

	jobOf := func(c int) JobID {
		return JobID{Kernel: "convolution", SpecHash: "sim", Problem: "recorded", Device: classes[c].name}
	}
	start := time.Now()
	var fleetEvals int
	var chain float64 // simulated seconds: the tuners one after another
	served := make([]time.Time, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	verifyMax := 0.0
	// Every node but the tuners waits for its class's offer and verifies
	// it with one evaluation.
	for i := k; i < n; i++ {
		wg.Go(func() {
			c := i % len(classes)
			deadline := time.After(300 * time.Second)
			for {
				if o, ok := clients[i].Best(jobOf(c)); ok {
					cfg, err := classes[c].space.ParseKey(o.Cert.Key)
					if err != nil {
						t.Errorf("node %d: offer %s: %v", i, o.Cert.Key, err)
						return
					}
					tr, _ := classes[c].rec.Evaluate(context.Background(), cfg, evaluate.Problem{})
					mu.Lock()
					fleetEvals++
					verifyMax = max(verifyMax, tr.Cost)
					served[i] = time.Now()
					mu.Unlock()
					if !tr.OK() || classes[c].optimum/tr.Time < 0.95 {
						t.Errorf("node %d: the fleet's config %s is at %.3f of the optimum", i, o.Cert.Key, classes[c].optimum/tr.Time)
					}
					return
				}
				select {
				case <-changed[i]:
				case <-deadline:
					t.Errorf("node %d served nothing in 300s", i)
					return
				}
			}
		})
	}
	// The tuners, class by class, each warm from the fleet's summaries of
	// the classes before it.
	for c := range k {
		node := clients[c]
		var prior []genome.Config
		if c > 0 {
			deadline := time.Now().Add(60 * time.Second)
			var srcs []evolve.Source
			for {
				srcs = simSources(node.Summaries("convolution"), classes[c].space)
				if len(srcs) >= c || time.Now().After(deadline) {
					break
				}
				select {
				case <-changed[c]:
				case <-time.After(20 * time.Millisecond):
				}
			}
			prior = evolve.RankTransfer(classes[c].space, srcs)
		}
		evals, key, told, cost := classes[c].tune(uint64(c), prior)
		fleetEvals += evals
		chain += cost
		for _, r := range told {
			s := Summary{Job: jobOf(c), Key: classes[c].space.Key(r.Config), Status: "ok", TimeMS: r.Value}
			if !r.OK {
				s.Status, s.TimeMS = "runtime", 0
			}
			node.PublishSummary(s)
		}
		tr, _ := classes[c].rec.Trial(key)
		raw := simCert(t, keys[c], jobOf(c), key, tr.Time)
		if err := node.PublishCert(raw); err != nil {
			t.Fatal(err)
		}
		served[c] = time.Now()
	}
	wg.Wait()
	wall := time.Since(start)
	for i := range n {
		if served[i].IsZero() {
			t.Fatalf("node %d never served", i)
		}
	}
	t.Logf("N=%d nodes, %d device classes: evaluations alone %d, fleet %d (%.1fx fewer); simulated measuring time until every node serves: alone %.1f s, fleet %.1f s; fleet wall time with real NATS clients %s (joining took %s)",
		n, k, aloneTotal, fleetEvals, float64(aloneTotal)/float64(fleetEvals), aloneMax, chain+verifyMax, wall.Round(time.Millisecond), joinTime.Round(time.Millisecond))
}

// simSources groups fleet summaries by device class into rank-transfer
// sources for space.
func simSources(sums []Summary, space *genome.Space) []evolve.Source {
	by := map[string]*evolve.Source{}
	var order []string
	for _, s := range sums {
		cfg, err := space.ParseKey(s.Key)
		if err != nil {
			continue
		}
		src := by[s.Job.Device]
		if src == nil {
			src = &evolve.Source{Name: s.Job.Device}
			by[s.Job.Device] = src
			order = append(order, s.Job.Device)
		}
		src.Results = append(src.Results, evolve.Result{Config: cfg, OK: s.Status == "ok", Value: s.TimeMS})
	}
	out := make([]evolve.Source, 0, len(order))
	for _, d := range order {
		out = append(out, *by[d])
	}
	return out
}

// simCert is a certificate of a replayed config: its one check says the
// time is recorded, not measured here.
func simCert(t testing.TB, key ed25519.PrivateKey, job JobID, cfgKey string, ms float64) []byte {
	t.Helper()
	c := &certs.Certificate{
		Job:      certs.Job{Kernel: job.Kernel, SpecHash: job.SpecHash, Problem: job.Problem, Device: job.Device},
		Key:      cfgKey,
		Config:   map[string]any{"key": cfgKey},
		Checks:   []certs.Check{{Name: "latency", Passed: true, Note: "replayed from a recorded space"}},
		Latency:  certs.Latency{Samples: 1, MedianMS: ms, P95MS: ms, CILowMS: ms, CIHighMS: ms, TimesMS: []float64{ms}},
		IssuedAt: time.Now().UTC(),
	}
	if err := certs.Sign(c, key); err != nil {
		t.Fatal(err)
	}
	raw, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

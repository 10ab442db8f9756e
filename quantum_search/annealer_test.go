package quantumsearch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/evolve/evolvetest"
	"github.com/quasim/quasim/genome"
)

var _ evolve.Strategy = (*Annealer)(nil)

func qs(s *genome.Space, seed uint64) evolve.Strategy { return New(s, seed, Options{}) }

func rnd(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewRandom(s, seed) }

func TestNewNilSpacePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil) did not panic")
		}
	}()
	New(nil, 1, Options{})
}

func TestExhaustsExactly(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	// A cheap model: this test is about bookkeeping, not quality.
	cheap := func(s *genome.Space, seed uint64) evolve.Strategy {
		return New(s, seed, Options{Epochs: 5, Refit: 1, Sweeps: 2, Batch: 2})
	}
	run, err := evolve.Run(context.Background(), bs, cheap, 7, evolve.RunOptions{Budget: bs.Size + 10, Batch: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Trace) != bs.Size {
		t.Fatalf("measured %d configs, want all %d", len(run.Trace), bs.Size)
	}
	seen := map[string]bool{}
	for _, m := range run.Trace {
		if seen[m.Key] {
			t.Fatalf("measured %q twice", m.Key)
		}
		seen[m.Key] = true
	}
}

func TestDeterministicAndResume(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	for _, batch := range []int{1, 4} {
		t.Run(fmt.Sprintf("batch%d", batch), func(t *testing.T) {
			opt := evolve.RunOptions{Budget: 120, Batch: batch}
			a, err := evolve.Run(context.Background(), bs, qs, 3, opt)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := evolve.Run(context.Background(), bs, qs, 3, opt)
			if !slices.Equal(evolvetest.Keys(a.Trace), evolvetest.Keys(b.Trace)) {
				t.Fatal("same seed gave different traces")
			}
			for _, at := range []int{5, 50} { // inside the initial design and after it
				opt.RoundTripAt = at
				c, err := evolve.Run(context.Background(), bs, qs, 3, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(evolvetest.Keys(a.Trace), evolvetest.Keys(c.Trace)) {
					t.Fatalf("run resumed at %d differs from the uninterrupted one", at)
				}
			}
			d, _ := evolve.Run(context.Background(), bs, qs, 4, evolve.RunOptions{Budget: 120, Batch: batch})
			if slices.Equal(evolvetest.Keys(a.Trace), evolvetest.Keys(d.Trace)) {
				t.Fatal("seeds 3 and 4 gave the same trace")
			}
		})
	}
}

// The same trials told in the same order give the same proposals, none of
// them told or invalid.
func TestSameTrialsSameProposals(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	rng := rand.New(rand.NewPCG(9, 9))
	var told []evolve.Result
	for range 40 {
		c, _ := bs.Space.Sample(rng)
		m, _ := bs.Measure(c)
		told = append(told, evolve.Result{Config: c, OK: m.OK, Value: m.Time})
	}
	a, b := New(bs.Space, 11, Options{}), New(bs.Space, 11, Options{})
	for _, s := range []*Annealer{a, b} {
		if err := s.Tell(told); err != nil {
			t.Fatal(err)
		}
	}
	pa, _ := a.Ask(10)
	pb, _ := b.Ask(10)
	if len(pa) != 10 || !slices.EqualFunc(pa, pb, genome.Config.Equal) {
		t.Fatalf("proposals differ after the same trials: %v vs %v", pa, pb)
	}
	seen := map[string]bool{}
	for _, c := range pa {
		if !bs.Space.Valid(c) {
			t.Errorf("proposed invalid %v", c)
		}
		if seen[bs.Space.Key(c)] {
			t.Errorf("proposed %v twice", c)
		}
		seen[bs.Space.Key(c)] = true
		for _, r := range told {
			if r.Config.Equal(c) {
				t.Errorf("proposed told config %v", c)
			}
		}
	}
	h := a.History()
	if len(h) != 1 || h[0].Told != 40 || h[0].Candidates < 10 || !(h[0].RMSE > 0) {
		t.Errorf("History = %+v", h)
	}
	t.Logf("history: %+v", h)
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	s := New(bs.Space, 1, Options{})
	if err := s.Tell([]evolve.Result{{Config: genome.Config{99, 0, 0, 0, 0}}}); !errors.Is(err, evolve.ErrBadResult) {
		t.Errorf("Tell(out of range) = %v, want ErrBadResult", err)
	}
	bad := [][]byte{nil, []byte("{}"), []byte(`{"v":1,"kind":"other"}`), []byte("garbage"),
		[]byte(`{"v":1,"kind":"quantumsearch","rng":"","told":[]}`),
		[]byte(`{"v":1,"kind":"quantumsearch","told":[{"c":[99,0,0,0,0]}]}`),
		[]byte(`{"v":1,"kind":"quantumsearch","model":{"w":[1],"v":[1],"std":1}}`),
	}
	for _, b := range bad {
		if err := s.UnmarshalBinary(b); !errors.Is(err, evolve.ErrBadState) {
			t.Errorf("UnmarshalBinary(%q) = %v, want ErrBadState", b, err)
		}
	}
	if cs, err := s.Ask(2); err != nil || len(cs) != 2 {
		t.Errorf("Ask after bad state = %v, %v", cs, err)
	}
	// A state from another space's shape is refused too.
	other, _ := genome.NewSpace([]genome.Param{{Name: "a", Values: evolvetest.IntValues(3)}}, genome.SpaceOptions{})
	o := New(other, 1, Options{Init: 1})
	cs, _ := o.Ask(1)
	_ = o.Tell([]evolve.Result{{Config: cs[0], OK: true, Value: 1}})
	_, _ = o.Ask(1)
	data, err := o.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UnmarshalBinary(data); !errors.Is(err, evolve.ErrBadState) {
		t.Errorf("UnmarshalBinary(other space) = %v, want ErrBadState", err)
	}
}

func score(t *testing.T, bs evolve.BenchSpace, f evolve.Factory, seeds uint64, budget int, ks []int) evolve.Score {
	t.Helper()
	var runs []evolve.BenchRun
	for seed := range seeds {
		r, err := evolve.Run(context.Background(), bs, f, seed, evolve.RunOptions{Budget: budget, Clock: time.Now})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return evolve.ScoreRuns(bs.Name, "", runs, bs.Optimum, ks)
}

func TestBeatsRandom(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	ks := []int{25, 50, 100}
	q, r := score(t, bs, qs, 20, 100, ks), score(t, bs, rnd, 20, 100, ks)
	for _, k := range ks {
		t.Logf("synthetic k=%d: quantumsearch %.3f, random %.3f", k, q.At[k], r.At[k])
	}
	t.Logf("overhead %.0f µs/eval", q.OverheadUS)
	if q.At[50] <= r.At[50] {
		t.Errorf("k=50: quantumsearch %.3f <= random %.3f", q.At[50], r.At[50])
	}
}

// TestCouplingsMatter checks that what the annealer gains comes from the
// QUBO's couplings (the machine's pairwise terms): on the RTX 3090 gemm
// space, annealing the same fitted model without them scores clearly lower
// (0.808 against 0.964 at k=100 over 12 seeds when this was written).
func TestCouplingsMatter(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under -race")
	}
	t.Parallel()
	bs := loadBench(t, filepath.Join(sharedSpaces(t), "gemm_clblast_RTX_3090.json.gz"))
	ks := []int{50, 100}
	uncoupled := func(s *genome.Space, seed uint64) evolve.Strategy { return New(s, seed, Options{uncoupled: true}) }
	q, u, r := score(t, bs, qs, 12, 100, ks), score(t, bs, uncoupled, 12, 100, ks), score(t, bs, rnd, 12, 100, ks)
	for _, k := range ks {
		t.Logf("gemm_clblast_RTX_3090 k=%d: quantumsearch %.3f, without couplings %.3f, random %.3f", k, q.At[k], u.At[k], r.At[k])
		if q.At[k] < u.At[k]+0.05 {
			t.Errorf("k=%d: quantumsearch %.3f, without couplings %.3f: the couplings do not pay", k, q.At[k], u.At[k])
		}
		if q.At[k] <= r.At[k] {
			t.Errorf("k=%d: quantumsearch %.3f <= random %.3f", k, q.At[k], r.At[k])
		}
	}
}

func sharedSpaces(t testing.TB) string {
	dir := filepath.Join("..", "..", "shared", "spaces")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("skipping: %s not found", dir)
	}
	return dir
}

func loadBench(t testing.TB, path string) evolve.BenchSpace {
	t.Helper()
	rec, err := replay.Load(path)
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	sp, err := rec.Space(evaluate.Problem{})
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := rec.Optimum()
	bs := evolve.BenchSpace{Name: rec.Name, Space: sp, Optimum: opt, Size: rec.Len()}
	bs.Measure = func(c genome.Config) (evolve.Measurement, error) {
		tr, err := rec.Evaluate(context.Background(), c, evaluate.Problem{})
		if err != nil {
			return evolve.Measurement{}, err
		}
		return evolve.Measurement{Key: tr.Key, Status: string(tr.Status), Time: tr.Time, OK: tr.OK(), Cost: tr.Cost}, nil
	}
	return bs
}

// TestSharedSpaces logs the metric on real recorded spaces; it checks only
// that runs complete.
func TestSharedSpaces(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("slow: run without -short and -race for the figures")
	}
	dir := sharedSpaces(t)
	ks := []int{25, 50, 100}
	for _, name := range []string{"gemm_clblast_RTX_3090", "convolution_RTX_3090", "dedispersion_milo_A100"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bs := loadBench(t, filepath.Join(dir, name+".json.gz"))
			q, r := score(t, bs, qs, 5, 100, ks), score(t, bs, rnd, 5, 100, ks)
			for _, k := range ks {
				t.Logf("%s (%d configs) k=%d: quantumsearch %.3f, random %.3f", name, len(bs.Space.All()), k, q.At[k], r.At[k])
			}
			t.Logf("%s overhead %.0f µs/eval", name, q.OverheadUS)
		})
	}
}

// BenchmarkAskTell measures the overhead per evaluation on the 17,956-config
// GEMM space, 100 evaluations a run.
func BenchmarkAskTell(b *testing.B) {
	bs := loadBench(b, filepath.Join(sharedSpaces(b), "gemm_clblast_RTX_3090.json.gz"))
	b.ResetTimer()
	for i := range b.N {
		if _, err := evolve.Run(context.Background(), bs, qs, uint64(i), evolve.RunOptions{Budget: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStepsBounded: a long run keeps the newest MaxSteps step records.
func TestStepsBounded(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	a := New(bs.Space, 5, Options{})
	for range MaxSteps + 20 {
		cs, _ := a.Ask(1)
		if len(cs) == 0 {
			break
		}
		var res []evolve.Result
		for _, c := range cs {
			m, _ := bs.Measure(c)
			res = append(res, evolve.Result{Config: c, OK: m.OK, Value: m.Time})
		}
		if err := a.Tell(res); err != nil {
			t.Fatal(err)
		}
	}
	h := a.History()
	if len(h) != MaxSteps || h[len(h)-1].Told <= h[0].Told {
		t.Fatalf("%d steps kept, told %d..%d; want the newest %d", len(h), h[0].Told, h[len(h)-1].Told, MaxSteps)
	}
}

// TestManyValuedParams fits a space whose configs set up to 248 bits (8
// ordinal parameters of 32 values): the fit must stay finite and the state
// marshal. Before the step was scaled by the bits a config sets, SGD
// diverged (training RMSE past 10 in log time, then +Inf, and
// MarshalBinary failed).
func TestManyValuedParams(t *testing.T) {
	var params []genome.Param
	for i := range 8 {
		vals := make([]genome.Value, 32)
		for j := range vals {
			vals[j] = genome.Int(int64(j + 1))
		}
		params = append(params, genome.Param{Name: fmt.Sprintf("p%d", i), Values: vals})
	}
	s, err := genome.NewSpace(params, genome.SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := New(s, 1, Options{})
	for range 15 {
		cs, err := a.Ask(4)
		if err != nil {
			t.Fatal(err)
		}
		var rs []evolve.Result
		for _, c := range cs {
			v := 1.0
			for i, j := range c {
				v += float64((j-i*3)*(j-i*3)) / 100
			}
			rs = append(rs, evolve.Result{Config: c, OK: true, Value: v})
		}
		if err := a.Tell(rs); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range a.History() {
		if st.RMSE > 1 || st.RMSE != st.RMSE {
			t.Fatalf("fit after %d results: RMSE %g in log time, diverged", st.Told, st.RMSE)
		}
	}
	if _, err := a.MarshalBinary(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkMarginalCost runs one annealer on the 17,956-config RTX 3090
// gemm space for 2,000 evaluations, one Ask and Tell at a time, and
// reports its own time per evaluation in windows of the history (ms):
//
//	go test ./quantum_search -run '^$' -bench MarginalCost -benchtime 1x
func BenchmarkMarginalCost(b *testing.B) {
	bs := loadBench(b, filepath.Join(sharedSpaces(b), "gemm_clblast_RTX_3090.json.gz"))
	evolvetest.MarginalCost(b, bs, qs, []int{1, 100, 400, 1000, 2000})
}

// TestPeriodicRefit: past fullRefits results, full refits come only when
// the history has grown by a tenth, and every Ask between them updates the
// model on the new results, so the cost per evaluation stays flat.
func TestPeriodicRefit(t *testing.T) {
	var params []genome.Param
	for i := range 6 {
		params = append(params, genome.Param{Name: fmt.Sprintf("p%d", i), Values: evolvetest.IntValues(6)})
	}
	s, err := genome.NewSpace(params, genome.SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := New(s, 3, Options{})
	full, last := 0, 0
	for n := 0; n < 1000; n += 4 {
		cs, err := a.Ask(4)
		if err != nil || len(cs) != 4 {
			t.Fatalf("Ask at %d: %v, %v", n, cs, err)
		}
		if n >= a.opt.Init && a.st.Fitted != len(a.st.Told) {
			t.Fatalf("after %d results the model was fitted on %d", len(a.st.Told), a.st.Fitted)
		}
		if a.st.FullFit != last {
			if last > fullRefits && a.st.FullFit-last < a.st.FullFit/10 {
				t.Fatalf("full refit at %d, %d after the last", a.st.FullFit, a.st.FullFit-last)
			}
			last = a.st.FullFit
			if last > fullRefits {
				full++
			}
		}
		var rs []evolve.Result
		for _, c := range cs {
			v := 1.0
			for i, j := range c {
				v += float64((j - i) * (j - i))
			}
			rs = append(rs, evolve.Result{Config: c, OK: true, Value: v})
		}
		if err := a.Tell(rs); err != nil {
			t.Fatal(err)
		}
	}
	// From 400 to 1,000 results at 10% growth a refit: about ten.
	if full < 5 || full > 12 {
		t.Errorf("%d full refits between %d and 1000 results, want about ten", full, fullRefits)
	}
	b, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r := New(s, 3, Options{})
	if err := r.UnmarshalBinary(b); err != nil || r.st.FullFit != a.st.FullFit {
		t.Fatalf("round trip: %v, full fit %d, want %d", err, r.st.FullFit, a.st.FullFit)
	}
}

// Replica exchange: a lower energy on the hotter of two neighbours always
// moves to the colder; the other way it moves with probability
// exp((1/T_hot - 1/T_cold)(E_hot - E_cold)).
func TestExchange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	temps := []float64{1, 0.5}
	a, b := &chain{}, &chain{}
	chains, e := []*chain{a, b}, []float64{-2, -1}
	if n := exchange(rng, temps, chains, e); n != 1 || chains[1] != a || e[1] != -2 {
		t.Fatalf("hot chain at lower energy: %d swaps, cold holds energy %v", n, e[1])
	}
	const trials = 20000
	swaps := 0
	for range trials {
		chains, e = []*chain{a, b}, []float64{-1, -2}
		swaps += exchange(rng, temps, chains, e)
	}
	want := math.Exp((1/1.0 - 1/0.5) * (-1 - -2)) // e^-1
	if got := float64(swaps) / trials; math.Abs(got-want) > 0.01 {
		t.Errorf("uphill swap rate %.4f, want %.4f", got, want)
	}
}

// Warm-started, the annealer's configs before its first fit come from the
// prior's head (synthetic data: a ranking by a distorted objective), and a
// state restored into an annealer that was never warm-started keeps it.
func TestWarmStartDrawsFromHead(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	var src evolve.Source
	for _, c := range bs.Space.All() {
		m, _ := bs.Measure(c)
		src.Results = append(src.Results, evolve.Result{Config: c, OK: m.OK, Value: m.Time * float64(1+c[3])})
	}
	prior := evolve.RankTransfer(bs.Space, []evolve.Source{src})
	in := map[string]bool{}
	for _, c := range evolve.NewPriorHead(bs.Space, prior).Configs {
		in[bs.Space.Key(c)] = true
	}
	a := New(bs.Space, 4, Options{})
	a.WarmStart(prior)
	first, _ := a.Ask(3)
	b, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r := New(bs.Space, 9, Options{})
	if err := r.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	next, _ := r.Ask(3)
	for _, c := range append(first, next...) {
		if !in[bs.Space.Key(c)] {
			t.Errorf("warm annealer drew %v, past the prior's head", c)
		}
	}
	cold := New(bs.Space, 4, Options{})
	cs, _ := cold.Ask(6)
	n := 0
	for _, c := range cs {
		if in[bs.Space.Key(c)] {
			n++
		}
	}
	if n == len(cs) {
		t.Errorf("cold annealer drew all %d configs from the head", n)
	}
}

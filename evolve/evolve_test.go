package evolve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/quasim/quasim/genome"
)

func intValues(n int) []genome.Value {
	out := make([]genome.Value, n)
	for i := range out {
		out[i] = genome.Int(int64(1 << i))
	}
	return out
}

// synthetic is a constrained space with a smooth, multi-modal objective and
// a region of failing configs, recorded like a cache file.
func synthetic(t testing.TB) BenchSpace {
	t.Helper()
	s, err := genome.NewSpace([]genome.Param{
		{Name: "a", Values: intValues(8)},
		{Name: "b", Values: intValues(8)},
		{Name: "c", Values: intValues(6)},
		{Name: "d", Values: intValues(4)},
		{Name: "e", Kind: genome.KindString, Values: []genome.Value{genome.Str("x"), genome.Str("y")}},
	}, genome.SpaceOptions{Constraints: []string{"a * b <= 4096", "c <= a * 4"}})
	if err != nil {
		t.Fatal(err)
	}
	f := func(c genome.Config) (float64, bool) {
		if c[0]+c[2] == 11 { // a failing ridge, as compile failures come in clusters
			return 0, false
		}
		x := float64(c[0]-5)*float64(c[0]-5) + 0.5*float64(c[1]-3)*float64(c[1]-3) +
			float64(c[2]-2)*float64(c[2]-2) + 0.3*float64(c[3]) + float64(c[4])*1.5 +
			2*math.Sin(float64(c[0]*c[1]))
		return 10 + x, true
	}
	bs := BenchSpace{Name: "synthetic", Space: s, Optimum: math.Inf(1), Size: len(s.All())}
	for _, c := range s.All() {
		if v, ok := f(c); ok {
			bs.Optimum = min(bs.Optimum, v)
			bs.Valid = append(bs.Valid, v)
		}
	}
	bs.Measure = func(c genome.Config) (Measurement, error) {
		if !s.Valid(c) {
			return Measurement{}, fmt.Errorf("invalid config %v", c)
		}
		v, ok := f(c)
		m := Measurement{Key: s.Key(c), OK: ok, Time: v, Cost: 1, Status: "ok"}
		if !ok {
			m.Status, m.Time = "compile", 0
		}
		return m, nil
	}
	return bs
}

var factories = map[string]Factory{
	"random": func(s *genome.Space, seed uint64) Strategy { return NewRandom(s, seed) },
	"es":     func(s *genome.Space, seed uint64) Strategy { return NewES(s, seed, ESOptions{}) },
	"forest": func(s *genome.Space, seed uint64) Strategy { return NewForest(s, seed, ForestOptions{}) },
	"portfolio": func(s *genome.Space, seed uint64) Strategy {
		return NewPortfolio(s, seed, []Member{
			{Name: "es", New: func(s *genome.Space, seed uint64) Strategy { return NewES(s, seed, ESOptions{}) }},
			{Name: "random", New: func(s *genome.Space, seed uint64) Strategy { return NewRandom(s, seed) }},
		}, PortfolioOptions{})
	},
}

func TestNoRepeatsAndValid(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	for name, f := range factories {
		t.Run(name, func(t *testing.T) {
			// Exhaust the space: every config exactly once, then nothing.
			run, err := Run(context.Background(), bs, f, 7, RunOptions{Budget: bs.Size + 10, Batch: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Trace) != bs.Size {
				t.Fatalf("%s measured %d configs, want all %d", name, len(run.Trace), bs.Size)
			}
			seen := map[string]bool{}
			for _, m := range run.Trace {
				if seen[m.Key] {
					t.Fatalf("%s measured %q twice", name, m.Key)
				}
				seen[m.Key] = true
			}
		})
	}
}

func TestDeterministicAndResume(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	for name, f := range factories {
		for _, batch := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/batch%d", name, batch), func(t *testing.T) {
				opt := RunOptions{Budget: 200, Batch: batch}
				a, err := Run(context.Background(), bs, f, 3, opt)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := Run(context.Background(), bs, f, 3, opt)
				if !slices.Equal(keys(a.Trace), keys(b.Trace)) {
					t.Fatalf("same seed gave different traces")
				}
				opt.RoundTripAt = 50
				c, err := Run(context.Background(), bs, f, 3, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(keys(a.Trace), keys(c.Trace)) {
					t.Fatalf("resumed run differs from the uninterrupted one at evaluation %d", firstDiff(keys(a.Trace), keys(c.Trace)))
				}
				d, _ := Run(context.Background(), bs, f, 4, RunOptions{Budget: 200, Batch: batch})
				if slices.Equal(keys(a.Trace), keys(d.Trace)) {
					t.Fatalf("seeds 3 and 4 gave the same trace")
				}
			})
		}
	}
}

func keys(tr []Measurement) []string {
	out := make([]string, len(tr))
	for i, m := range tr {
		out[i] = m.Key
	}
	return out
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i + 1
		}
	}
	return min(len(a), len(b)) + 1
}

// Telling the same results in the same order to two strategies with the same
// seed gives the same next proposals, whoever proposed the told configs.
func TestSameTrialsSameProposals(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	rng := rand.New(rand.NewPCG(9, 9))
	var told []Result
	for range 40 {
		c, _ := bs.Space.Sample(rng)
		m, _ := bs.Measure(c)
		told = append(told, Result{Config: c, OK: m.OK, Value: m.Time})
	}
	for name, f := range factories {
		a, b := f(bs.Space, 11), f(bs.Space, 11)
		for _, s := range []Strategy{a, b} {
			if err := s.Tell(told); err != nil {
				t.Fatal(err)
			}
		}
		pa, _ := a.Ask(10)
		pb, _ := b.Ask(10)
		if !slices.EqualFunc(pa, pb, genome.Config.Equal) {
			t.Errorf("%s: proposals differ after the same trials", name)
		}
		for _, c := range pa {
			if !bs.Space.Valid(c) {
				t.Errorf("%s proposed invalid %v", name, c)
			}
			for _, r := range told {
				if r.Config.Equal(c) {
					t.Errorf("%s proposed told config %v", name, c)
				}
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	for name, f := range factories {
		s := f(bs.Space, 1)
		if err := s.Tell([]Result{{Config: genome.Config{99, 0, 0, 0, 0}}}); !errors.Is(err, ErrBadResult) {
			t.Errorf("%s Tell(out of range) = %v, want ErrBadResult", name, err)
		}
		for _, bad := range [][]byte{nil, []byte("{}"), []byte(`{"v":1,"kind":"other"}`), []byte("garbage")} {
			if err := s.UnmarshalBinary(bad); !errors.Is(err, ErrBadState) {
				t.Errorf("%s UnmarshalBinary(%q) = %v, want ErrBadState", name, bad, err)
			}
		}
		// The strategy still works after rejecting bad state.
		if cs, err := s.Ask(2); err != nil || len(cs) != 2 {
			t.Errorf("%s Ask after bad state = %v, %v", name, cs, err)
		}
	}
}

func TestRandomExpectation(t *testing.T) {
	t.Parallel()
	// Brute force over all subsets of a tiny space: 5 configs, 2 failed.
	valid := []float64{1, 2, 4}
	n := 5
	for k := 1; k <= n; k++ {
		total, count := 0.0, 0
		for mask := range 1 << n {
			if popcount(mask) != k {
				continue
			}
			best := math.Inf(1)
			for i := range 3 {
				if mask&(1<<i) != 0 {
					best = min(best, valid[i])
				}
			}
			if !math.IsInf(best, 1) {
				total += 1 / best
			}
			count++
		}
		want := total / float64(count)
		if got := RandomExpectation(valid, n, k); math.Abs(got-want) > 1e-12 {
			t.Errorf("RandomExpectation(k=%d) = %v, want %v", k, got, want)
		}
	}
}

func popcount(x int) int {
	n := 0
	for ; x > 0; x &= x - 1 {
		n++
	}
	return n
}

// The measured random search lands on the exact expectation: the harness
// counts evaluations honestly.
func TestRandomMatchesExpectation(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	var runs []BenchRun
	for seed := range uint64(300) {
		r, err := Run(context.Background(), bs, factories["random"], seed, RunOptions{Budget: 50})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	sc := ScoreRuns(bs.Name, "random", runs, bs.Optimum, []int{5, 25, 50})
	for _, k := range []int{5, 25, 50} {
		want := RandomExpectation(bs.Valid, bs.Size, k)
		if math.Abs(sc.At[k]-want) > 0.02 {
			t.Errorf("random at k=%d: %.4f, exact expectation %.4f", k, sc.At[k], want)
		}
	}
}

func TestESBeatsRandom(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	score := func(name string) Score {
		var runs []BenchRun
		for seed := range uint64(30) {
			r, err := Run(context.Background(), bs, factories[name], seed, RunOptions{Budget: 100})
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
		return ScoreRuns(bs.Name, name, runs, bs.Optimum, []int{50, 100})
	}
	es, rnd := score("es"), score("random")
	for _, k := range []int{50, 100} {
		if es.At[k] <= rnd.At[k] {
			t.Errorf("k=%d: es %.3f <= random %.3f", k, es.At[k], rnd.At[k])
		}
	}
}

func TestScoreRuns(t *testing.T) {
	t.Parallel()
	mk := func(times ...float64) BenchRun {
		var tr []Measurement
		for _, x := range times {
			tr = append(tr, Measurement{OK: x > 0, Time: x, Cost: 2})
		}
		return BenchRun{Trace: tr}
	}
	runs := []BenchRun{mk(0, 4, 2, 1), mk(2, 2, 1.04, 3), mk(4, 4, 4, 4)}
	sc := ScoreRuns("s", "x", runs, 1, []int{1, 2, 4, 9})
	want := map[int]float64{1: (0 + 0.5 + 0.25) / 3, 2: (0.25 + 0.5 + 0.25) / 3, 4: (1 + 1/1.04 + 0.25) / 3, 9: (1 + 1/1.04 + 0.25) / 3}
	for k, w := range want {
		if math.Abs(sc.At[k]-w) > 1e-12 {
			t.Errorf("At[%d] = %v, want %v", k, sc.At[k], w)
		}
	}
	// to95: run 1 at 4, run 2 at 3, run 3 never: median 4.
	if sc.EvalsTo95 == nil || *sc.EvalsTo95 != 4 {
		t.Errorf("EvalsTo95 = %v, want 4", sc.EvalsTo95)
	}
	if sc.SimSecondsTo95 == nil || *sc.SimSecondsTo95 != 8 {
		t.Errorf("SimSecondsTo95 = %v, want 8", sc.SimSecondsTo95)
	}
	sc = ScoreRuns("s", "x", runs[1:], 1, []int{1})
	if sc.EvalsTo95 != nil {
		t.Errorf("EvalsTo95 = %v with half the runs never there, want nil", *sc.EvalsTo95)
	}
}

// Under RunOptions.Noise a strategy is shown one recorded repetition per
// config, drawn by seed and key, and the score is the recorded mean of the
// config it found best by what it was shown. Synthetic repetitions: each
// config's mean ± 40%.
func TestNoise(t *testing.T) {
	bs := synthetic(t)
	measure := bs.Measure
	bs.Measure = func(c genome.Config) (Measurement, error) {
		m, err := measure(c)
		if m.OK {
			m.Times = []float64{0.6 * m.Time, m.Time, 1.4 * m.Time}
		}
		return m, err
	}
	run := func(seed uint64, noise bool) BenchRun {
		r, err := Run(context.Background(), bs, factories["random"], seed, RunOptions{Budget: 200, Noise: noise})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	quiet, noisy := run(1, false), run(1, true)
	drawn := map[int]int{}
	for i, m := range noisy.Trace {
		q := quiet.Trace[i]
		if m.Key != q.Key {
			t.Fatalf("evaluation %d: noise changed what random search asked", i)
		}
		if !m.OK {
			continue
		}
		if m.True != q.Time || q.True != 0 {
			t.Fatalf("evaluation %d: true %v, want the mean %v (and none without noise)", i, m.True, q.Time)
		}
		j := slices.Index(q.Times, m.Time)
		if j < 0 {
			t.Fatalf("evaluation %d: shown %v, not one of %v", i, m.Time, q.Times)
		}
		drawn[j]++
	}
	if len(drawn) != 3 {
		t.Errorf("repetitions drawn %v, want all three", drawn)
	}
	if again := run(1, true); !slices.EqualFunc(again.Trace, noisy.Trace, func(a, b Measurement) bool { return a.Time == b.Time }) {
		t.Error("the same seed drew other repetitions")
	}
	// Scores: the shown best's mean, never better than the quiet run's.
	fq, fn := Fractions(quiet.Trace, bs.Optimum), Fractions(noisy.Trace, bs.Optimum)
	best, truth := math.Inf(1), 0.0
	for i, m := range noisy.Trace {
		if m.OK && m.Time < best {
			best, truth = m.Time, m.True
		}
		if want := bs.Optimum / truth; fn[i] != want {
			t.Fatalf("fraction after %d: %v, want optimum / the shown best's mean = %v", i+1, fn[i], want)
		}
		if fn[i] > fq[i] {
			t.Fatalf("fraction after %d: noisy %v above quiet %v", i+1, fn[i], fq[i])
		}
	}
	if fn[len(fn)-1] == fq[len(fq)-1] {
		t.Log("noise did not mislead this run's final choice")
	}
}

// noiseDraw is pinned: examples/opencl-peers/sim_kt.py --noise draws the
// same repetitions for Kernel Tuner, so both tuners see the same noise.
func TestNoiseDrawVectors(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		key  string
		n    int
		want int
	}{
		{1, "16,1,4,8", 32, 11},
		{2, "16,1,4,8", 32, 17},
		{20, "128,128,32,16,8,16,32,2,8,2,0,0,1,1,32", 32, 5},
		{7, "32,0.5,a", 10, 0},
	} {
		if got := noiseDraw(tc.seed, tc.key, tc.n); got != tc.want {
			t.Errorf("noiseDraw(%d, %q, %d) = %d, want %d (as sim_kt.py draws)", tc.seed, tc.key, tc.n, got, tc.want)
		}
	}
}

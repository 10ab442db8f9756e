package strategies

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
)

// wideSpace has 8 parameters of 32 values and two constraints: 1.1e12
// combinations, about 4e11 valid, far past what All could hold.
func wideSpace(t testing.TB) *genome.Space {
	t.Helper()
	var params []genome.Param
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		vals := make([]genome.Value, 32)
		for i := range vals {
			vals[i] = genome.Int(int64(i + 1))
		}
		params = append(params, genome.Param{Name: name, Values: vals})
	}
	s, err := genome.NewSpace(params, genome.SpaceOptions{Constraints: []string{"a * b <= 256", "c % d == 0 or e > f"}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// synthetic is an objective of known optimum 1 at target: one plus a
// weighted distance on relaxed indices with a pairwise term, so every
// other config is slower. It stands in for a kernel; nothing is measured.
func synthetic(s *genome.Space, target genome.Config) func(genome.Config) float64 {
	params := s.Params()
	rel := func(c genome.Config, i int) float64 {
		if n := len(params[i].Values); n > 1 {
			return float64(c[i]) / float64(n-1)
		}
		return 0
	}
	return func(c genome.Config) float64 {
		v := 1.0
		for i := range c {
			v += (1 + float64(i%3)) * math.Abs(rel(c, i)-rel(target, i))
		}
		if len(c) > 1 {
			v += 2 * math.Abs((rel(c, 0)-rel(target, 0))*(rel(c, 1)-rel(target, 1)))
		}
		return v
	}
}

// run drives strategy name for evals evaluations of f in batches of 4 and
// returns the best value and the strategy's own time (Ask and Tell).
func run(t testing.TB, name string, s *genome.Space, f func(genome.Config) float64, evals int) (float64, time.Duration) {
	t.Helper()
	fac, _ := Get(name)
	st := fac(s, 1)
	best := math.Inf(1)
	seen := map[string]bool{}
	var own time.Duration
	for done := 0; done < evals; {
		start := time.Now()
		cs, err := st.Ask(min(4, evals-done))
		own += time.Since(start)
		if err != nil || len(cs) == 0 {
			t.Fatalf("%s: Ask after %d = %v, %v", name, done, cs, err)
		}
		var rs []evolve.Result
		for _, c := range cs {
			if !s.Valid(c) || seen[s.Key(c)] {
				t.Fatalf("%s: asked invalid or repeated config %v", name, c)
			}
			seen[s.Key(c)] = true
			v := f(c)
			best = min(best, v)
			rs = append(rs, evolve.Result{Config: c, OK: true, Value: v})
		}
		start = time.Now()
		if err := st.Tell(rs); err != nil {
			t.Fatal(err)
		}
		own += time.Since(start)
		done += len(cs)
	}
	b, err := st.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := fac(s, 2).UnmarshalBinary(b); err != nil {
		t.Fatalf("%s: state does not round-trip: %v", name, err)
	}
	return best, own
}

// Every strategy runs on a space too large to list, without listing it.
func TestStrategiesOnWideSpace(t *testing.T) {
	s := wideSpace(t)
	n, ok := s.Count()
	if !ok || n < 1e8 || s.Enumerable() {
		t.Fatalf("wide space: count %d (%v), enumerable %v", n, ok, s.Enumerable())
	}
	target, err := s.Sample(rand.New(rand.NewPCG(42, 42)))
	if err != nil {
		t.Fatal(err)
	}
	f := synthetic(s, target)
	for _, name := range Names() {
		best, own := run(t, name, s, f, 40)
		t.Logf("%s: best %.3f of optimum 1 after 40, %.2f ms per evaluation", name, best, float64(own.Microseconds())/40/1000)
	}
	if s.Listed() {
		t.Fatal("a strategy listed the wide space")
	}
}

// TestLargeSpacePortfolio runs the portfolio for 400 evaluations of the
// synthetic objective on each T1 file in $QUASIM_LARGE_T1 (written by
// genome/testdata/scale_t1.py) and on the shipped hotspot T1 space, and
// logs the sampler's construction time, the portfolio's own time per
// evaluation and the best fraction of the optimum. Peak memory is measured
// around the test binary (docs/kernel-authors/search-spaces.md).
func TestLargeSpacePortfolio(t *testing.T) {
	var files []string
	if dir := os.Getenv("QUASIM_LARGE_T1"); dir != "" {
		files, _ = filepath.Glob(filepath.Join(dir, "*.T1.json"))
	}
	if hs := filepath.Join("..", "..", "..", "shared", "spaces", "kernels", "hotspot_milo.T1.json"); fileExists(hs) {
		files = append(files, hs)
	}
	if len(files) == 0 {
		t.Skip("skipping: set QUASIM_LARGE_T1 to the folder scale_t1.py wrote")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t1, err := genome.ParseT1(filepath.Base(path), data)
		if err != nil {
			t.Fatal(err)
		}
		s, err := t1.Space()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		n, counted := s.Count()
		build := time.Since(start)
		target, err := s.Sample(rand.New(rand.NewPCG(42, 42)))
		if err != nil {
			t.Fatal(err)
		}
		best, own := run(t, "portfolio", s, synthetic(s, target), 400)
		t.Logf("%s: %.3g raw, %d valid (counted %v) in %.2f s; portfolio 400 evals: fraction of optimum %.3f, own time %.2f ms per evaluation",
			filepath.Base(path), s.RawSize(), n, counted, build.Seconds(), 1/best, float64(own.Microseconds())/400/1000)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

package quantumsearch

import (
	"fmt"
	"math"
	"testing"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/evolve/evolvetest"
	"github.com/quasim/quasim/genome"
)

// heavyTail is a synthetic space (labelled so) whose slow configs are up
// to a hundred times the optimum, past a cliff that no sum of pairwise
// terms draws (three parameters together), as the AMD convolution
// recordings of the benchmark hub are: the median config there is 30
// times the optimum, on NVIDIA's about 3 times.
func heavyTail(t testing.TB) evolve.BenchSpace {
	t.Helper()
	var ps []genome.Param
	for i, n := range []int{8, 6, 5, 4, 4, 2} {
		ps = append(ps, genome.Param{Name: fmt.Sprintf("p%d", i), Values: evolvetest.IntValues(n)})
	}
	s, err := genome.NewSpace(ps, genome.SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := func(c genome.Config) float64 {
		x := 0.04*float64((c[0]-5)*(c[0]-5)) + 0.05*float64((c[1]-1)*(c[1]-1)) +
			0.06*float64((c[2]-3)*(c[2]-3)) + 0.05*float64(c[3]) + 0.1*float64(c[4]*c[5]) +
			0.05*math.Sin(float64(3*c[0]+c[1]))
		if c[0]+c[1]+c[2] > 9 || (c[3]+c[4])%3 == 1 {
			x += 3 + 0.3*float64(c[0]+c[2]) // the cliff: 20 to 100 times slower
		}
		return math.Exp(x)
	}
	bs := evolve.BenchSpace{Name: "synthetic heavy tail", Space: s, Optimum: math.Inf(1), Size: len(s.All())}
	for _, c := range s.All() {
		v := f(c)
		bs.Optimum = min(bs.Optimum, v)
		bs.Valid = append(bs.Valid, v)
	}
	bs.Measure = func(c genome.Config) (evolve.Measurement, error) {
		return evolve.Measurement{Key: s.Key(c), OK: true, Time: f(c), Cost: 1, Status: "ok"}, nil
	}
	return bs
}

func TestRankTargetsHeavyTail(t *testing.T) {
	t.Parallel()
	bs := heavyTail(t)
	ks := []int{25, 50, 100}
	logs := func(s *genome.Space, seed uint64) evolve.Strategy {
		return New(s, seed, Options{Targets: evolve.TargetsLog})
	}
	l, r := score(t, bs, logs, 20, 100, ks), score(t, bs, qs, 20, 100, ks)
	for _, k := range ks {
		t.Logf("%s k=%d: log targets %.3f, rank targets %.3f", bs.Name, k, l.At[k], r.At[k])
	}
	// 0.803 against 0.953 at k=50 and 0.876 against 0.990 at k=100 (20
	// seeds) when this was written: the log's squared error is spent on
	// the cliff.
	for _, k := range ks[1:] {
		if r.At[k] < l.At[k]+0.05 {
			t.Errorf("k=%d: rank targets %.3f, log targets %.3f: ranks do not pay on a heavy tail", k, r.At[k], l.At[k])
		}
	}
}

package evolve

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/quasim/quasim/genome"
)

// The forest learns a function of value indices: on held-out points its
// predictions follow the truth, and its spread is zero where every tree
// saw the same constant.
func TestForestFits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	levels := []int{8, 8, 4, 3}
	truth := func(c []int) float64 {
		v := float64((c[0]-5)*(c[0]-5)) + 0.5*float64(c[1])
		if c[2] == 3 && c[3] == 0 { // an interaction trees must carry down a branch
			v += 6
		}
		return v
	}
	draw := func() []int {
		c := make([]int, len(levels))
		for i, l := range levels {
			c[i] = rng.IntN(l)
		}
		return c
	}
	var x [][]int
	var y []float64
	for range 300 {
		c := draw()
		x, y = append(x, c), append(y, truth(c))
	}
	f := fitForest(rng, x, y, levels, forestOptions{trees: 16, minLeaf: 2, features: 5.0 / 6})
	var pred, want []float64
	for range 200 {
		c := draw()
		m, _ := f.predict(c)
		pred, want = append(pred, m), append(want, truth(c))
	}
	if r := correlation(pred, want); r < 0.9 {
		t.Errorf("held-out correlation %.3f, want >= 0.9", r)
	}
	flat := fitForest(rng, x, make([]float64, len(x)), levels, forestOptions{trees: 8, minLeaf: 2, features: 1})
	if m, v := flat.predict(draw()); m != 0 || v != 0 {
		t.Errorf("constant targets: mean %v variance %v, want 0 and 0", m, v)
	}
}

func correlation(a, b []float64) float64 {
	var ma, mb float64
	for i := range a {
		ma += a[i]
		mb += b[i]
	}
	ma /= float64(len(a))
	mb /= float64(len(b))
	var sab, saa, sbb float64
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	}
	return sab / math.Sqrt(saa*sbb)
}

// TestForestModelPays checks that what makes forest search work is its
// model: the same search with the model fitted to the results in random
// order (so its expected improvement is noise around the random
// candidates and the best configs) scores clearly lower, and the real one
// beats random search.
func TestForestModelPays(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	ks := []int{25, 50}
	score := func(f Factory, name string) Score {
		var runs []BenchRun
		for seed := range uint64(20) {
			r, err := Run(context.Background(), bs, f, seed, RunOptions{Budget: slices.Max(ks)})
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
		return ScoreRuns(bs.Name, name, runs, bs.Optimum, ks)
	}
	real := score(factories["forest"], "forest")
	blind := score(func(s *genome.Space, seed uint64) Strategy {
		return NewForest(s, seed, ForestOptions{shuffle: true})
	}, "forest-shuffled")
	rnd := score(factories["random"], "random")
	for _, k := range ks {
		t.Logf("k=%d: forest %.3f, shuffled targets %.3f, random %.3f", k, real.At[k], blind.At[k], rnd.At[k])
		if real.At[k] < blind.At[k]+0.02 {
			t.Errorf("k=%d: forest %.3f, with the model blind %.3f: the model does not pay", k, real.At[k], blind.At[k])
		}
		if real.At[k] <= rnd.At[k] {
			t.Errorf("k=%d: forest %.3f <= random %.3f", k, real.At[k], rnd.At[k])
		}
	}
}

// Past 400 results the model is refitted only now and then; a run
// marshalled between two refits resumes with the same model and so the
// same proposals.
func TestForestResumeBetweenRefits(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	f := factories["forest"]
	budget := min(bs.Size, 520)
	a, err := Run(context.Background(), bs, f, 5, RunOptions{Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), bs, f, 5, RunOptions{Budget: budget, RoundTripAt: 430})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys(a.Trace), keys(b.Trace)) {
		t.Fatalf("resumed at 430 differs at evaluation %d", firstDiff(keys(a.Trace), keys(b.Trace)))
	}
}

// Past 400 results the forest refits only when the history has grown by a
// tenth since the last fit, so the cost per evaluation stays flat.
func TestForestPeriodicRefit(t *testing.T) {
	t.Parallel()
	bs := synthetic(t)
	f := NewForest(bs.Space, 3, ForestOptions{})
	fits, last := 0, 0
	for n := 0; n < min(bs.Size, 900); n++ {
		cs, err := f.Ask(1)
		if err != nil || len(cs) != 1 {
			t.Fatalf("Ask at %d: %v, %v", n, cs, err)
		}
		if f.st.FitAt != last {
			if last >= 400 && f.st.FitAt < last+last/10 {
				t.Fatalf("refit at %d, %d after the last", f.st.FitAt, f.st.FitAt-last)
			}
			if last < 400 && f.st.FitAt != n && f.st.FitAt <= 400 {
				t.Fatalf("after %d results the model was fitted on %d", n, f.st.FitAt)
			}
			last = f.st.FitAt
			if last > 400 {
				fits++
			}
		}
		m, _ := bs.Measure(cs[0])
		if err := f.Tell([]Result{{Config: cs[0], OK: m.OK, Value: m.Time}}); err != nil {
			t.Fatal(err)
		}
	}
	if fits == 0 || fits > 8 {
		t.Errorf("%d refits between 400 and 900 results, want a few", fits)
	}
}

package evolve

import (
	"math"
	"testing"
)

// Leave-one-out never scores a space with the variant chosen on it: here
// variant "b" is best overall only because of space s3, so s3 is scored
// with "a", chosen without it, and the held-out mean falls below the
// in-sample one.
func TestLeaveOneOut(t *testing.T) {
	ks := []int{25}
	sc := func(space, st string, v float64) Score {
		return Score{Space: space, Strategy: st, At: map[int]float64{25: v}}
	}
	scores := []Score{
		sc("s1", "a", 0.80), sc("s1", "b", 0.79),
		sc("s2", "a", 0.90), sc("s2", "b", 0.89),
		sc("s3", "a", 0.50), sc("s3", "b", 0.70),
		sc("s4", "a", 0.60),  // no score of b: left out
		sc("s1", "other", 1), // not a candidate
	}
	l := LeaveOneOut(scores, []string{"a", "b"}, ks, nil)
	if l.InSample != "b" {
		t.Errorf("in sample chose %q, want b", l.InSample)
	}
	want := map[string]string{"s1": "b", "s2": "b", "s3": "a"}
	for s, c := range want {
		if l.Chosen[s] != c {
			t.Errorf("held out %s: chose %q, want %q", s, l.Chosen[s], c)
		}
	}
	if len(l.Chosen) != 3 {
		t.Errorf("chosen for %v, want s1..s3", l.Chosen)
	}
	if got, want := l.Mean[25], (0.79+0.89+0.50)/3; math.Abs(got-want) > 1e-12 {
		t.Errorf("held-out mean %v, want %v", got, want)
	}
	if got, want := l.InSampleMean[25], (0.79+0.89+0.70)/3; math.Abs(got-want) > 1e-12 {
		t.Errorf("in-sample mean %v, want %v", got, want)
	}
}

// Leave one kernel out holds out a space's siblings with it: s2 and s3 are
// one kernel, and b wins on s1 alone, so s1 (held out with no siblings)
// gets a, while s2 and s3 get b, chosen on s1 alone; by space, s2 is
// scored by a, which its sibling s3 in training ties with b.
func TestLeaveOneGroupOut(t *testing.T) {
	ks := []int{25}
	sc := func(space, st string, v float64) Score {
		return Score{Space: space, Strategy: st, At: map[int]float64{25: v}}
	}
	scores := []Score{
		sc("s1", "a", 0.60), sc("s1", "b", 0.80),
		sc("s2", "a", 0.90), sc("s2", "b", 0.70),
		sc("s3", "a", 0.90), sc("s3", "b", 0.70),
	}
	kernel := map[string]string{"s1": "k1", "s2": "k2", "s3": "k2"}
	byKernel := LeaveOneOut(scores, []string{"a", "b"}, ks, func(s string) string { return kernel[s] })
	bySpace := LeaveOneOut(scores, []string{"a", "b"}, ks, nil)
	for s, want := range map[string]string{"s1": "a", "s2": "b", "s3": "b"} {
		if byKernel.Chosen[s] != want {
			t.Errorf("leave one kernel out, %s: chose %q, want %q", s, byKernel.Chosen[s], want)
		}
	}
	if bySpace.Chosen["s2"] != "a" {
		t.Errorf("leave one space out, s2: chose %q, want a (its sibling s3 in training)", bySpace.Chosen["s2"])
	}
	if got, want := byKernel.Mean[25], (0.60+0.70+0.70)/3; math.Abs(got-want) > 1e-12 {
		t.Errorf("held-out mean %v, want %v", got, want)
	}
}

// The spread is over seeds of each seed's mean over the spaces, and a seed
// missing on a space does not count.
func TestSeedSpread(t *testing.T) {
	runs := []BenchRun{
		oneEval("x", 1, 0.5), oneEval("y", 1, 0.7), // mean 0.6
		oneEval("x", 2, 0.9), oneEval("y", 2, 0.9), // mean 0.9
		oneEval("x", 3, 0.1), // only on x
	}
	got := SeedSpread(runs, func(string) float64 { return 1 }, []int{1})
	want := math.Sqrt((0.15*0.15 + 0.15*0.15) / 1) // sd of {0.6, 0.9}
	if math.Abs(got[1]-want) > 1e-12 {
		t.Errorf("spread %v, want %v", got[1], want)
	}
}

// Follow counts, after each new best a member proposed, the next
// evaluations that went to the same member; the design's bests and
// evaluations that are no improvement start nothing.
func TestFollowShare(t *testing.T) {
	m := func(by string, v float64) Measurement { return Measurement{By: by, OK: true, Time: v} }
	run := BenchRun{Trace: []Measurement{
		m(DesignName, 10), // a design best: not counted
		m("a", 9),         // new best by a: the next 5 are b, a, a, b, b
		m("b", 9.5), m("a", 9.6), m("a", 9.7), m("b", 9.8), m("b", 9.9),
		m("b", 8), // new best by b: the one after is b
		m("b", 8.5),
	}}
	if got, want := followShare([]BenchRun{run}), 3.0/6; got != want {
		t.Errorf("follow share %v, want %v", got, want)
	}
}

// The spread does not depend on map order: bench and bench score, which
// collect the same runs, must print the same bits.
func TestSeedSpreadDeterministic(t *testing.T) {
	var runs []BenchRun
	for seed := range uint64(40) {
		for _, sp := range []string{"x", "y", "z"} {
			v := 0.3 + 0.7*math.Mod(float64(seed)*0.618+float64(len(sp)+int(sp[0]))*0.1, 1)
			runs = append(runs, BenchRun{Space: sp, Seed: seed, Trace: []Measurement{{OK: true, Time: 1 / v}}})
		}
	}
	first := SeedSpread(runs, func(string) float64 { return 1 }, []int{1})[1]
	for range 50 {
		if got := SeedSpread(runs, func(string) float64 { return 1 }, []int{1})[1]; got != first {
			t.Fatalf("spread %v then %v from the same runs", first, got)
		}
	}
}

// Pairing is by seed: the difference of each seed's means, its spread and
// the seeds won; a seed that b lacks, or that a ran on only some spaces,
// is left out.
func TestPairedDiff(t *testing.T) {
	a := []BenchRun{
		oneEval("x", 1, 0.5), oneEval("y", 1, 0.7), // mean 0.6
		oneEval("x", 2, 0.9), oneEval("y", 2, 0.9), // mean 0.9
		oneEval("x", 3, 0.9), oneEval("y", 3, 0.9), // no seed 3 in b
		oneEval("x", 4, 0.9), // only on x
	}
	b := []BenchRun{
		oneEval("x", 1, 0.4), oneEval("y", 1, 0.6), // mean 0.5: a wins by 0.1
		oneEval("x", 2, 0.9), oneEval("y", 2, 1.0), // mean 0.95: a loses by 0.05
		oneEval("x", 4, 0.1), oneEval("y", 4, 0.1),
	}
	p := PairedDiff(a, b, func(string) float64 { return 1 }, []int{1})
	if p.Seeds != 2 || p.Wins[1] != 1 {
		t.Errorf("seeds %d, wins %d; want 2 and 1", p.Seeds, p.Wins[1])
	}
	if want := (0.1 - 0.05) / 2; math.Abs(p.Diff[1]-want) > 1e-12 {
		t.Errorf("difference %v, want %v", p.Diff[1], want)
	}
	if want := math.Sqrt(2 * 0.075 * 0.075); math.Abs(p.SD[1]-want) > 1e-12 {
		t.Errorf("spread %v, want %v", p.SD[1], want)
	}
}

// oneEval is a run of one evaluation at fraction v of an optimum of 1.
func oneEval(space string, seed uint64, v float64) BenchRun {
	return BenchRun{Space: space, Seed: seed, Trace: []Measurement{{OK: true, Time: 1 / v}}}
}

package evolvetest

import (
	"fmt"
	"math"
	"testing"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
)

// IntValues returns n int values 1, 2, 4, ... 2^(n-1).
func IntValues(n int) []genome.Value {
	out := make([]genome.Value, n)
	for i := range out {
		out[i] = genome.Int(int64(1 << i))
	}
	return out
}

// Synthetic is a small constrained space with a smooth,
// multi-modal objective and a ridge of failing configs, recorded like a
// cache file.
func Synthetic(t testing.TB) evolve.BenchSpace {
	t.Helper()
	s, err := genome.NewSpace([]genome.Param{
		{Name: "a", Values: IntValues(8)},
		{Name: "b", Values: IntValues(8)},
		{Name: "c", Values: IntValues(6)},
		{Name: "d", Values: IntValues(4)},
		{Name: "e", Kind: genome.KindString, Values: []genome.Value{genome.Str("x"), genome.Str("y")}},
	}, genome.SpaceOptions{Constraints: []string{"a * b <= 4096", "c <= a * 4"}})
	if err != nil {
		t.Fatal(err)
	}
	f := func(c genome.Config) (float64, bool) {
		if c[0]+c[2] == 11 {
			return 0, false
		}
		x := float64(c[0]-5)*float64(c[0]-5) + 0.5*float64(c[1]-3)*float64(c[1]-3) +
			float64(c[2]-2)*float64(c[2]-2) + 0.3*float64(c[3]) + float64(c[4])*1.5 +
			2*math.Sin(float64(c[0]*c[1]))
		return 10 + x, true
	}
	bs := evolve.BenchSpace{Name: "synthetic", Space: s, Optimum: math.Inf(1), Size: len(s.All())}
	for _, c := range s.All() {
		if v, ok := f(c); ok {
			bs.Optimum = min(bs.Optimum, v)
			bs.Valid = append(bs.Valid, v)
		}
	}
	bs.Measure = func(c genome.Config) (evolve.Measurement, error) {
		if !s.Valid(c) {
			return evolve.Measurement{}, fmt.Errorf("invalid config %v", c)
		}
		v, ok := f(c)
		m := evolve.Measurement{Key: s.Key(c), OK: ok, Time: v, Cost: 1, Status: "ok"}
		if !ok {
			m.Status, m.Time = "compile", 0
		}
		return m, nil
	}
	return bs
}

// Keys lists the config keys of a trace, in order.
func Keys(tr []evolve.Measurement) []string {
	out := make([]string, len(tr))
	for i, m := range tr {
		out[i] = m.Key
	}
	return out
}

package evaluate

import (
	"errors"
	"math"
	"testing"
)

func TestParseObjective(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Objective
	}{
		{"", TimeObjective},
		{"time", TimeObjective},
		{"energy", Objective{Kind: "energy"}},
		{" edp ", Objective{Kind: "edp"}},
		{"0.7*time + 0.3*energy", Objective{Kind: "weighted", WTime: 0.7, WEnergy: 0.3}},
		{"time+0.01 * energy", Objective{Kind: "weighted", WTime: 1, WEnergy: 0.01}},
		{"2*energy", Objective{Kind: "weighted", WEnergy: 2}},
	} {
		got, err := ParseObjective(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseObjective(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if back, err := ParseObjective(got.String()); err != nil || back != got {
			t.Errorf("%q: String %q parses to %+v, %v", tc.in, got.String(), back, err)
		}
	}
	for _, in := range []string{"speed", "time + time", "-1*time", "0*time + 0*energy", "x*time", "time + ", "NaN*energy", "1e400*time"} {
		if _, err := ParseObjective(in); err == nil {
			t.Errorf("ParseObjective(%q): no error", in)
		}
	}
}

func TestObjectiveValue(t *testing.T) {
	w, _ := ParseObjective("0.5*time + 2*energy")
	for _, tc := range []struct {
		o    Objective
		t, e float64
		want float64
	}{
		{TimeObjective, 3, 0, 3},
		{Objective{Kind: "energy"}, 3, 40, 40},
		{Objective{Kind: "edp"}, 3, 40, 120},
		{w, 3, 40, 81.5},
	} {
		if got, err := tc.o.Value(tc.t, tc.e); err != nil || got != tc.want {
			t.Errorf("%s.Value(%v, %v) = %v, %v; want %v", tc.o, tc.t, tc.e, got, err, tc.want)
		}
	}
	if _, err := (Objective{Kind: "energy"}).Value(3, 0); !errors.Is(err, ErrNoEnergy) {
		t.Errorf("energy without a measurement: %v", err)
	}
}

func TestFrontAndChoose(t *testing.T) {
	pts := []Point{
		{Key: "a", TimeMS: 1.00, EnergyMJ: 100},
		{Key: "b", TimeMS: 1.02, EnergyMJ: 80},
		{Key: "c", TimeMS: 1.04, EnergyMJ: 90}, // dominated by b
		{Key: "d", TimeMS: 1.10, EnergyMJ: 60},
		{Key: "e", TimeMS: 2.00, EnergyMJ: 59},
		{Key: "f", TimeMS: 0.90, EnergyMJ: 0}, // no energy: not on the front
		{Key: "g", TimeMS: 1.00, EnergyMJ: 100},
	}
	front := Front(pts)
	var keys string
	for _, p := range front {
		keys += p.Key
	}
	if keys != "abde" {
		t.Fatalf("front %q, want abde", keys)
	}
	energy := Objective{Kind: "energy"}
	for _, tc := range []struct {
		obj  Objective
		slow float64
		want string
	}{
		{TimeObjective, -1, "a"},
		{energy, 0.05, "b"},
		{energy, 0.10, "d"},
		{energy, 0, "a"},
		{energy, -1, "e"},
		{Objective{Kind: "edp"}, -1, "d"}, // 66 against 100, 81.6, 118
	} {
		got, ok := Choose(front, tc.obj, tc.slow)
		if !ok || got.Key != tc.want {
			t.Errorf("Choose(%s, %v) = %+v, %v; want %s", tc.obj, tc.slow, got, ok, tc.want)
		}
	}
	if _, ok := Choose(nil, energy, 0.05); ok {
		t.Error("Choose on an empty front is ok")
	}
	// Every point off the front is dominated by one on it.
	for _, p := range pts {
		if p.EnergyMJ == 0 {
			continue
		}
		on := false
		for _, q := range front {
			on = on || q == p || (q.TimeMS <= p.TimeMS && q.EnergyMJ <= p.EnergyMJ)
		}
		if !on || math.IsNaN(p.TimeMS) {
			t.Errorf("%s neither on the front nor dominated", p.Key)
		}
	}
}

func FuzzParseObjective(f *testing.F) {
	for _, s := range []string{"time", "energy", "edp", "0.7*time + 0.3*energy", "time + 1e-3*energy", "1e7*energy", "1E+07*time + energy", "*", "+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseObjective(s)
		if err != nil {
			return
		}
		back, err := ParseObjective(o.String())
		if err != nil || back != o {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, o, o.String(), back, err)
		}
		if v, err := o.Value(2, 3); err != nil || v < 0 || math.IsNaN(v) {
			t.Fatalf("%q: Value(2, 3) = %v, %v", s, v, err)
		}
	})
}

func TestMedianCI(t *testing.T) {
	if m, h := MedianCI([]float64{2, 1}); m != 1.5 || !math.IsInf(h, 1) {
		t.Errorf("two values: %v ± %v", m, h)
	}
	// MAD 0.1 over 4 values: 1.96·1.253·1.4826·0.1/2.
	m, h := MedianCI([]float64{1.0, 1.1, 0.9, 5})
	if m != 1.05 || math.Abs(h-1.96*1.253*1.4826*0.1/2) > 1e-12 {
		t.Errorf("MedianCI = %v ± %v", m, h)
	}
	if _, h := MedianCI([]float64{3, 3, 3}); h != 0 {
		t.Errorf("equal values: ± %v", h)
	}
}

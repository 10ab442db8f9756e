package fleet

import (
	"crypto/ed25519"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

func TestContribute(t *testing.T) {
	ms := []Measured{
		// Problem 64: a fastest, b and c tied, d failed.
		{"64", "a", true, 1}, {"64", "b", true, 2}, {"64", "c", true, 2}, {"64", "d", false, 0},
		// Problem 128: c fastest, a slowest; a's better of two runs counts.
		{"128", "c", true, 1}, {"128", "a", true, 9}, {"128", "a", true, 3},
		// Problem 256: one config alone is the fastest.
		{"256", "b", true, 5},
	}
	c := Contribute("sgemm", dev, ms)
	want := map[string]float64{
		"a": (0 + 1) / 2.0,    // 64: rank 0 of 3; 128: rank 1 of 2
		"b": (0.75 + 0) / 2,   // 64: tied ranks 1, 2 of 3 -> 1.5/2; 256: alone
		"c": (0.75 + 0) / 2.0, // 64: tied; 128: fastest
	}
	if c.Problems != 3 || len(c.Quantiles) != len(want) {
		t.Fatalf("Contribute = %+v, want 3 problems and %v", c, want)
	}
	for k, q := range want {
		if math.Abs(c.Quantiles[k]-q) > 1e-12 {
			t.Errorf("quantile of %s = %v, want %v", k, c.Quantiles[k], q)
		}
	}
}

func TestCombine(t *testing.T) {
	got := Combine([]Contribution{
		{Quantiles: map[string]float64{"a": 0, "b": 1}},
		{Quantiles: map[string]float64{"a": 0.5, "b": 0.5, "c": 0.25}},
	})
	want := []Ranked{{"a", 0.25, 2}, {"c", 0.25, 1}, {"b", 0.75, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Combine = %v, want %v", got, want)
	}
}

// A view holds only contributions signed by a trusted key, at their own
// key, with quantiles in 0..1.
func TestViewContributions(t *testing.T) {
	a, b := testKey(1), testKey(2)
	view := NewView(NewTrust(a.Public().(ed25519.PublicKey)))
	put := func(c Contribution) error {
		data, _ := encode(c)
		_, _, err := view.Apply(AggKey(c.Kernel, c.Device, c.Node), data, false)
		return err
	}
	c := Contribute("sgemm", dev, []Measured{{"64", "x", true, 1}, {"64", "y", true, 2}})
	c.sign(a, "0a", time.Now())
	if err := put(c); err != nil {
		t.Fatalf("trusted contribution: %v", err)
	}
	u := c
	u.sign(b, "0b", time.Now())
	if err := put(u); !errors.Is(err, ErrUntrusted) {
		t.Errorf("untrusted contribution: err = %v, want ErrUntrusted", err)
	}
	f := c
	f.Quantiles = map[string]float64{"x": 1, "y": 0} // reversed, signature kept
	f.Node = "0c"
	if err := put(f); !errors.Is(err, ErrTampered) {
		t.Errorf("tampered contribution: err = %v, want ErrTampered", err)
	}
	bad := c
	bad.Quantiles = map[string]float64{"x": 2}
	bad.sign(a, "0d", time.Now())
	if err := put(bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("quantile 2: err = %v, want ErrMalformed", err)
	}
	got, nodes := view.Aggregate("sgemm", dev)
	if nodes != 1 || len(got) != 2 || got[0].Key != "x" || got[0].Quantile != 0 {
		t.Errorf("Aggregate = %v from %d nodes, want x then y from 1", got, nodes)
	}
}

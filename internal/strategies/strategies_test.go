package strategies

import (
	"testing"

	"github.com/quasim/quasim/genome"
)

func TestRegistry(t *testing.T) {
	sp, err := genome.NewSpace([]genome.Param{
		{Name: "a", Values: []genome.Value{genome.Int(1), genome.Int(2), genome.Int(4), genome.Int(8)}},
		{Name: "b", Values: []genome.Value{genome.Int(1), genome.Int(2), genome.Int(3)}},
	}, genome.SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Get(Default); !ok {
		t.Fatalf("default strategy %q is not registered", Default)
	}
	for _, n := range Names() {
		f, _ := Get(n)
		s := f(sp, 1)
		if s.Name() != n {
			t.Errorf("strategy registered as %q calls itself %q", n, s.Name())
		}
		cs, err := s.Ask(3)
		if err != nil || len(cs) != 3 {
			t.Errorf("%s Ask(3) = %v, %v", n, cs, err)
		}
	}
	if _, ok := Get("nope"); ok {
		t.Errorf("Get(nope) found something")
	}
}

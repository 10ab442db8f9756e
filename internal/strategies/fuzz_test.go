package strategies

import (
	"testing"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/evolve/evolvetest"
)

// A policy is bytes from the store; whatever they hold, restoring one must
// not panic, and a strategy that accepted them must go on proposing valid
// configs it has not been told.
func FuzzUnmarshal(f *testing.F) {
	bs := evolvetest.Synthetic(f)
	names := Names()
	for i, name := range names {
		fac, _ := Get(name)
		s := fac(bs.Space, 1)
		for range 30 {
			cs, _ := s.Ask(1)
			var res []evolve.Result
			for _, c := range cs {
				m, _ := bs.Measure(c)
				res = append(res, evolve.Result{Config: c, OK: m.OK, Value: m.Time})
			}
			_ = s.Tell(res)
		}
		b, err := s.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Add(uint8(0), []byte(`{"v":1,"kind":"portfolio","plays":[1],"rewards":[1],"alloc":[1],"members":{}}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		fac, _ := Get(names[int(which)%len(names)])
		s := fac(bs.Space, 2)
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		cs, err := s.Ask(3)
		if err != nil {
			return
		}
		for _, c := range cs {
			if !bs.Space.Valid(c) {
				t.Fatalf("restored %s proposed invalid config %v", s.Name(), c)
			}
		}
	})
}

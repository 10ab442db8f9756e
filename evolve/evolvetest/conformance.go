package evolvetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/quasim/quasim/evolve"
)

// Conformance checks what every strategy promises on the Synthetic space:
// it proposes each valid config at most once and then nothing; the same
// seed gives a byte-identical trace, also when the strategy is marshalled
// and resumed in the middle of a run; and bad state bytes are refused with
// evolve.ErrBadState. seeded says whether different seeds must give
// different traces. Under -short the runs are shorter and the space is not
// exhausted, for builds as slow as the race detector's.
func Conformance(t *testing.T, f evolve.Factory, seeded bool) {
	t.Helper()
	bs := Synthetic(t)
	ctx := context.Background()
	budget, trips := 150, []int{1, 40, 97}
	if testing.Short() {
		budget, trips = 60, []int{1, 29}
	}
	t.Run("exhausts", func(t *testing.T) {
		if testing.Short() {
			t.Skip("short: the strategy packages' own tests exhaust the space")
		}
		run, err := evolve.Run(ctx, bs, f, 7, evolve.RunOptions{Budget: bs.Size + 10, Batch: 3})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, m := range run.Trace {
			if seen[m.Key] {
				t.Fatalf("measured %q twice", m.Key)
			}
			seen[m.Key] = true
		}
		if want := len(bs.Space.All()); len(run.Trace) > want {
			t.Fatalf("measured %d configs of %d", len(run.Trace), want)
		}
	})
	for _, batch := range []int{1, 4} {
		t.Run(fmt.Sprintf("deterministic/batch%d", batch), func(t *testing.T) {
			opt := evolve.RunOptions{Budget: budget, Batch: batch}
			a, err := evolve.Run(ctx, bs, f, 3, opt)
			if err != nil {
				t.Fatal(err)
			}
			b, err := evolve.Run(ctx, bs, f, 3, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(traceBytes(t, a), traceBytes(t, b)) {
				t.Fatalf("same seed gave different traces")
			}
			for _, at := range trips {
				opt.RoundTripAt = at
				c, err := evolve.Run(ctx, bs, f, 3, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(traceBytes(t, a), traceBytes(t, c)) {
					t.Fatalf("run resumed at %d differs from the uninterrupted one", at)
				}
			}
			if seeded {
				d, _ := evolve.Run(ctx, bs, f, 4, evolve.RunOptions{Budget: budget, Batch: batch})
				if slices.Equal(Keys(a.Trace), Keys(d.Trace)) {
					t.Fatalf("seeds 3 and 4 gave the same trace")
				}
			}
		})
	}
	t.Run("bad state", func(t *testing.T) {
		s := f(bs.Space, 1)
		for _, bad := range [][]byte{nil, []byte("{}"), []byte("garbage"), []byte(`{"v":1,"kind":"no such strategy"}`)} {
			if err := s.UnmarshalBinary(bad); !errors.Is(err, evolve.ErrBadState) {
				t.Errorf("UnmarshalBinary(%q) = %v, want ErrBadState", bad, err)
			}
		}
		if cs, err := s.Ask(2); err != nil || len(cs) == 0 {
			t.Errorf("Ask after refused states = %v, %v", cs, err)
		}
	})
}

// traceBytes is a run's trace as bench --trace writes it, one JSON object
// per evaluation.
func traceBytes(t testing.TB, r evolve.BenchRun) []byte {
	t.Helper()
	var out []byte
	for _, m := range r.Trace {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, b...), '\n')
	}
	return out
}

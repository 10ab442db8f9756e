package cli

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
)

// refreshes counts the fresh "processes" a confirmation asks for; each is
// the same in-process builtin kernel.
type refreshes struct {
	evaluate.Evaluator
	n int
}

func (r *refreshes) Fresh(ctx context.Context, p evaluate.Problem) (evaluate.Evaluator, func(), error) {
	r.n++
	return r.Evaluator, func() {}, nil
}

// Under --confirm-share the finalists are measured again only where a
// fresh worker's start (the run's start to its first evaluation) and a
// measurement a further finalist fit in that share of the search's wall
// time: not after a search of cheap evaluations behind a slow start.
func TestBenchLiveConfirmShare(t *testing.T) {
	k, err := builtin.New("reduce", builtin.Options{Reps: evaluate.Reps{Max: 3}})
	if err != nil {
		t.Fatal(err)
	}
	p := evaluate.Problem{Dims: []int{4096}}
	sp, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	var trace []evaluate.Trial
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		c, err := sp.Sample(rng)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := k.Evaluate(context.Background(), c, p)
		if err != nil {
			t.Fatal(err)
		}
		trace = append(trace, tr)
	}
	for _, tt := range []struct {
		name    string
		first   float64 // seconds from the run's start to its first evaluation
		each    float64 // seconds an evaluation after it
		skipped bool
	}{
		{"a slow start, cheap evaluations (vector_add)", 3, 0.3, true},
		{"a fast start, costly evaluations (convolution)", 2, 8, false},
	} {
		r := liveRun{Trace: trace}
		for i := range trace {
			r.DoneS = append(r.DoneS, tt.first+float64(i)*tt.each)
		}
		rf := &refreshes{Evaluator: k}
		o := benchLiveOptions{finalists: 2, rounds: 1, share: 0.25}
		var said []string
		if err := r.confirm(context.Background(), rf, p, sp, o, func(f string, a ...any) { said = append(said, f) }); err != nil {
			t.Fatal(err)
		}
		if skipped := rf.n == 0; skipped != tt.skipped || (r.ConfirmSkipped != "") != tt.skipped || (len(r.Finalists) == 0) != tt.skipped {
			t.Errorf("%s: %d fresh processes, skipped %q, %d finalists; want skipped %v", tt.name, rf.n, r.ConfirmSkipped, len(r.Finalists), tt.skipped)
		}
		if tt.skipped && !strings.Contains(strings.Join(said, "\n"), "not measured again") {
			t.Errorf("%s: said %q; want why the finalists were not measured again", tt.name, said)
		}
		// Without the bound they are measured whatever they cost.
		r, rf, o.share = liveRun{Trace: trace, DoneS: r.DoneS}, &refreshes{Evaluator: k}, 0
		if err := r.confirm(context.Background(), rf, p, sp, o, func(string, ...any) {}); err != nil || rf.n != 1 || len(r.Finalists) != 2 {
			t.Errorf("%s, no share: %d fresh processes, %d finalists, %v; want 1 and 2", tt.name, rf.n, len(r.Finalists), err)
		}
	}
}

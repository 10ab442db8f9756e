package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// A virtual speedup of the side branch's first stage pauses the other
// stream by f·t after its kernel: the critical stream's reduce starts at
// least that long after its convolution ends, though the join it waits for
// ended earlier. With the pauses off, the gap is gone (a few µs).
func TestVirtualSpeedupPauses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the builtin pipeline: 8 s under -race")
	}
	ctx := context.Background()
	p := &Perturbation{Name: "side", Stage: "conv_small", Speedup: 0.5}
	for _, off := range []bool{false, true} {
		r := newRunner(t, Builtin())
		r.noPauses = off
		checked, short := 0, 0
		for it := range 5 {
			q, err := r.Run(ctx, it, p)
			if err != nil {
				t.Fatal(err)
			}
			big, side, sum := q.Spans[0], q.Spans[1], q.Spans[3]
			if want := int64(math.Round(0.5 * float64(side.Duration()))); q.Paused != want {
				t.Fatalf("paused %d ns, want f·t = %d", q.Paused, want)
			}
			if side.End >= big.End {
				continue // stream a was still in its kernel: it owes nothing
			}
			checked++
			gap := sum.Start - big.End
			if gap < q.Paused {
				short++
				if !off {
					t.Fatalf("iteration %d: reduce started %d ns after the convolution, want at least the pause %d", it, gap, q.Paused)
				}
			}
		}
		if checked == 0 {
			t.Fatalf("pauses off %v: the side stage never ended first", off)
		}
		if off && short == 0 {
			t.Fatalf("pauses off: every gap still at least the pause (%d iterations): the check cannot tell", checked)
		}
	}
}

// A stream whose last kernel ends after the sped-up stage pays its pause
// after it, and that pause holds up the iteration's end: less the pauses,
// the end-to-end time still covers the long kernel. Under load (CI runs
// packages side by side on 2 cores) the scheduler can let the long kernel
// end first, so it runs until three iterations had the order it needs.
func TestVirtualSpeedupTrailingPause(t *testing.T) {
	r := newRunner(t, Pipeline{Name: "tail", Stages: []Stage{
		{Name: "x", Kernel: "reduce", Problem: "65536", Stream: "a"},
		{Name: "long", Kernel: "conv2d", Problem: "128,128,5", Stream: "b"},
	}})
	checked := 0
	for it := 0; it < 60 && checked < 3; it++ {
		q, err := r.Run(context.Background(), it, &Perturbation{Name: "x", Stage: "x", Speedup: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		x, long := q.Spans[0], q.Spans[1]
		if x.End >= long.End {
			continue
		}
		checked++
		first := min(x.Start, long.Start)
		if q.Paused <= 0 || q.EndToEnd-q.Paused < long.End-first {
			t.Fatalf("iteration %d: end to end %d ns less pauses %d ends before the long kernel (%d ns)", it, q.EndToEnd, q.Paused, long.End-first)
		}
	}
	if checked == 0 {
		t.Fatal("the sped-up stage never ended first in 60 iterations")
	}
}

// On the builtin pipeline (a few ms an iteration), a virtual speedup of
// the big convolution, on the critical path, gains end to end about what
// the model predicts; one of the small convolution, with several ms of
// slack, gains about nothing, though the pauses subtracted are real. A
// burst of load on a shared 2-core machine can swing a dozen pairs' median
// by 30 points, so it takes up to three attempts, and fails if none holds.
func TestVirtualSpeedupBuiltin(t *testing.T) {
	if testing.Short() {
		t.Skip("times the builtin pipeline")
	}
	r := newRunner(t, Builtin())
	perts := []Perturbation{
		{Name: "conv_big-20%", Stage: "conv_big", Speedup: 0.2},
		{Name: "conv_small-20%", Stage: "conv_small", Speedup: 0.2},
	}
	for attempt := 1; attempt <= 3; attempt++ {
		rep, err := Experiment(context.Background(), r, perts, ExperimentOptions{Runs: 12, Warmup: 2, RNG: rand.New(rand.NewPCG(1, 1))}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var bad []string
		for _, x := range rep.Results {
			t.Logf("attempt %d: %-32s on path %.2f: predicted %+.1f%%, measured %+.1f%% [%+.1f, %+.1f], pauses %.2f ms of %.2f ms",
				attempt, x.Perturbation, x.OnPath, x.Predicted.Median, x.Measured.Median, x.Measured.Lo, x.Measured.Hi, x.PausedMS, x.BaseMS)
			if x.PausedMS <= 0 || x.Outside > Tolerance {
				bad = append(bad, fmt.Sprintf("%s: prediction %+.1f%% outside the measured interval by %.1f points", x.Perturbation, x.Predicted.Median, x.Outside))
			}
		}
		big, side := rep.Results[0], rep.Results[1]
		if big.Predicted.Median >= 0 || big.Measured.Median >= 0 {
			bad = append(bad, fmt.Sprintf("critical path: predicted %+.1f%%, measured %+.1f%%: want a gain", big.Predicted.Median, big.Measured.Median))
		}
		if side.Predicted.Median != 0 {
			bad = append(bad, fmt.Sprintf("slack: predicted %+.1f%%, want 0", side.Predicted.Median))
		}
		if len(bad) == 0 {
			return
		}
		t.Logf("attempt %d: %s", attempt, strings.Join(bad, "; "))
	}
	t.Fatal("no attempt of three held")
}

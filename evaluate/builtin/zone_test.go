package builtin

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
)

// smallChain is conv2d 40x44x5 (1,440 outputs) feeding reduce.
func smallChain(t testing.TB) (ZoneStage, ZoneStage) {
	return ZoneStage{Kernel: mustNew(t, "conv2d", Options{}), Dims: []int{40, 44, 5}, Key: "16,8,1,True,4,fp32"},
		ZoneStage{Kernel: mustNew(t, "reduce", Options{}), Key: "256,4,1,float32,fp32"}
}

// TestZoneBoundHoldsOverSeeds zones the small chain on 200 seeds, one at a
// time, at a budget nothing can miss (rel 1): on every seed every map's
// measured error is within its composed bound; and the maps certified at
// three budgets on seeds 1, 2, 3 stay within the budget on every seed.
func TestZoneBoundHoldsOverSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): numerics over 200 seeds, run in full without -short")
	}
	t.Parallel()
	runs := 200
	up, down := smallChain(t)
	ctx := context.Background()
	certified := map[float64]map[string]bool{}
	for _, budget := range []float64{1e-3, 1e-5, 1e-7} {
		z, err := Zone(ctx, up, down, ZoneSettings{Budget: evaluate.ErrorBudget{Kind: evaluate.ToleranceRel, Value: budget}, Inputs: evaluate.InputsPositive, Runs: 1})
		if err != nil {
			t.Fatal(err)
		}
		certified[budget] = map[string]bool{}
		for _, m := range z.Maps {
			if m.Passed {
				certified[budget][m.Key()] = true
			}
		}
		t.Logf("budget %g: %d of %d maps certified", budget, len(certified[budget]), len(z.Maps))
	}
	if len(certified[1e-3]) == 0 || len(certified[1e-3]) <= len(certified[1e-5]) {
		t.Errorf("certified at 1e-3: %d maps, at 1e-5: %d; want some, and more at the looser budget", len(certified[1e-3]), len(certified[1e-5]))
	}
	for seed := range uint64(runs) {
		z, err := Zone(ctx, up, down, ZoneSettings{Budget: evaluate.ErrorBudget{Kind: evaluate.ToleranceRel, Value: 1}, Inputs: evaluate.InputsPositive,
			Seeds: []uint64{1000 + seed}, Runs: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range z.Maps {
			if !(m.Measured <= m.Bound) {
				t.Fatalf("seed %d %s: measured %g beyond the composed bound %g", 1000+seed, m.Key(), m.Measured, m.Bound)
			}
			for budget, keys := range certified {
				if keys[m.Key()] && !(m.Measured <= budget) {
					t.Fatalf("seed %d %s certified at %g: measured %g", 1000+seed, m.Key(), budget, m.Measured)
				}
			}
		}
	}
}

// TestZoneJointCertifiesWhatSplitCannot: a budget for the chain may be
// spent unevenly. The all-fp32 map with a float32 accumulator spends
// most of its bound in the reduce; at 1.1 times its bound the chain
// certifies it, while budgets of half the total per kernel do not.
func TestZoneJointCertifiesWhatSplitCannot(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	t.Parallel()
	up, down := smallChain(t)
	ctx := context.Background()
	set := ZoneSettings{Budget: evaluate.ErrorBudget{Kind: evaluate.ToleranceRel, Value: 1}, Inputs: evaluate.InputsPositive, Runs: 1}
	z, err := Zone(ctx, up, down, set)
	if err != nil {
		t.Fatal(err)
	}
	const key = "conv2d 16,8,1,True,4,fp32 | reduce 256,4,1,float32,fp32"
	var bound float64
	for _, m := range z.Maps {
		if m.Key() == key {
			bound = m.Bound
			if !(m.Stages[1].Bound > 0.6*m.Bound) {
				t.Errorf("reduce's share %g of %g, want most", m.Stages[1].Bound, m.Bound)
			}
		}
	}
	if bound == 0 {
		t.Fatalf("no map %s", key)
	}
	set.Budget.Value = 1.1 * bound
	if z, err = Zone(ctx, up, down, set); err != nil {
		t.Fatal(err)
	}
	if at := fmt.Sprint(z.At(1).Best >= 0, z.At(1e-30).Best); at != "true -1" {
		t.Errorf("At(1), At(1e-30): %s", at)
	}
	joint, split := false, false
	for i, m := range z.Maps {
		if m.Key() != key {
			continue
		}
		joint = m.Passed
		j := z.BestWithin([]float64{0.5, 0.5})
		split = j == i
		// What the split serves, the chain certifies too.
		if j >= 0 && !z.Maps[j].Passed {
			t.Errorf("split serves %s, not certified", z.Maps[j].Key())
		}
	}
	if !joint || split {
		t.Errorf("at %g: certified for the chain %v, served by the even split %v; want true, false", set.Budget.Value, joint, split)
	}
	if z.Best < 0 {
		t.Fatal("nothing certified")
	}
	if d := z.Maps[z.Default]; d.Key() != key {
		t.Errorf("default map %s, want the stages' own configs %s", d.Key(), key)
	}
}

// TestZoneSgemmChain zones sgemm feeding reduce (every B format and every
// reduce map): on three seeds each map's measured error is within its
// composed bound, and the bound of a reduced B is the larger upstream.
func TestZoneSgemmChain(t *testing.T) {
	t.Parallel()
	up := ZoneStage{Kernel: mustNew(t, "sgemm", Options{}), Dims: []int{24, 40, 20}, Key: "16,16,16,1,1,True,ikj,fp32"}
	down := ZoneStage{Kernel: mustNew(t, "reduce", Options{}), Key: "256,1,1,float32,fp32"}
	z, err := Zone(context.Background(), up, down, ZoneSettings{Budget: evaluate.ErrorBudget{Kind: evaluate.ToleranceAbs, Value: 1}, Inputs: evaluate.InputsSigned, Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(z.Maps) != 6*30 {
		t.Errorf("%d maps, want 180", len(z.Maps))
	}
	up32, up16 := -1.0, -1.0
	for _, m := range z.Maps {
		if !(m.Measured <= m.Bound) {
			t.Errorf("%s: measured %g beyond the composed bound %g", m.Key(), m.Measured, m.Bound)
		}
		switch m.Stages[0].Map["b_input"] {
		case "fp32":
			up32 = m.Stages[0].Bound
		case "fp16":
			up16 = m.Stages[0].Bound
		}
	}
	if !(up32 > 0 && up16 > 10*up32) {
		t.Errorf("upstream bounds: fp32 B %g, fp16 B %g", up32, up16)
	}
}

func TestZoneErrors(t *testing.T) {
	t.Parallel()
	up, down := smallChain(t)
	ctx := context.Background()
	rel := ZoneSettings{Budget: evaluate.ErrorBudget{Kind: evaluate.ToleranceRel, Value: 1e-3}, Runs: 1}
	for _, tt := range []struct {
		name     string
		up, down ZoneStage
		set      ZoneSettings
		chain    bool
	}{
		{"reduce upstream", down, down, rel, true},
		{"conv2d downstream", up, up, rel, true},
		{"ulp budget", up, down, ZoneSettings{Budget: evaluate.ErrorBudget{Kind: evaluate.ToleranceULP, Value: 4}}, true},
		{"no budget", up, down, ZoneSettings{}, true},
		{"bad key", ZoneStage{Kernel: up.Kernel, Dims: up.Dims, Key: "1,2,3"}, down, rel, false},
		{"bad dims", ZoneStage{Kernel: up.Kernel, Dims: []int{3, 3, 5}}, down, rel, false},
		{"bad reduce key", up, ZoneStage{Kernel: down.Kernel, Key: "256,4,1,float32"}, rel, false},
	} {
		_, err := Zone(ctx, tt.up, tt.down, tt.set)
		if err == nil || errors.Is(err, ErrChain) != tt.chain {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	// A config another problem's and not valid at this one: the default's
	// other parameters stand in, with a note.
	z, err := Zone(ctx, up, ZoneStage{Kernel: down.Kernel, Key: "262144,4,1,float32,fp32"}, rel)
	if err != nil || len(z.Notes) != 1 || !strings.Contains(z.Notes[0], "262144,4,1,float32,fp32 is not valid at 1440") {
		t.Errorf("reduce at a block over n: %v, notes %q", err, z.Notes)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Zone(cctx, up, down, rel); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// BenchmarkZoning makes the zoning table: conv2d 512x512x7 (at
// 256,32,1,True,4, its fastest local-buffer config) feeding reduce
// (65536,8,1, its fastest), positive inputs, every map checked on seeds 1,
// 2, 3 and timed by the thread's CPU time (median of 15 runs per stage).
// Per budget: the fastest map certified for the chain, the fastest that
// budgets split evenly between the kernels would serve, and the stages'
// own configs.
//
//	go test ./evaluate/builtin -run '^$' -bench Zoning -benchtime 1x -v
func BenchmarkZoning(b *testing.B) {
	up := ZoneStage{Kernel: mustNew(b, "conv2d", Options{}), Dims: []int{512, 512, 7}, Key: "256,32,1,True,4,fp32"}
	down := ZoneStage{Kernel: mustNew(b, "reduce", Options{}), Key: "65536,8,1,float32,fp32"}
	for b.Loop() {
		goruntime.LockOSThread()
		z, err := Zone(context.Background(), up, down, ZoneSettings{Budget: evaluate.ErrorBudget{Kind: evaluate.ToleranceRel, Value: 1},
			Inputs: evaluate.InputsPositive, Clock: threadCPU})
		goruntime.UnlockOSThread()
		if err != nil {
			b.Fatal(err)
		}
		row := func(label string, i int) {
			if i < 0 {
				b.Logf("  %-12s none", label)
				return
			}
			m := z.Maps[i]
			b.Logf("  %-12s %-58s bound %.3g (conv2d %.3g + reduce %.3g) measured %.3g  %.3f ms (%.3f + %.3f)",
				label, m.Key(), m.Bound, m.Stages[0].Bound, m.Stages[1].Bound, m.Measured, m.TimeMS, m.Stages[0].TimeMS, m.Stages[1].TimeMS)
		}
		row("own configs", z.Default)
		for _, budget := range []float64{1e-3, 5e-4, 1e-5, 1e-7} {
			zb := z.At(budget)
			b.Logf("budget %g:", budget)
			row("chain", zb.Best)
			row("even split", zb.BestWithin([]float64{0.5, 0.5}))
			// The certified map spending the most of the budget upstream,
			// and how many maps are certified at all.
			n, loose := 0, -1
			for i, m := range zb.Maps {
				if m.Passed {
					n++
					if loose < 0 || m.Stages[0].Bound > zb.Maps[loose].Stages[0].Bound {
						loose = i
					}
				}
			}
			row("most upstream", loose)
			b.Logf("  %d of %d maps certified", n, len(zb.Maps))
		}
	}
}

// TestZoneStageBoundsLargestOverSeeds: a runtime's report is checked
// against one stage's bound, so each stage's bound and limit are the
// largest over the seeds, not the ones at the seed with the worst total.
func TestZoneStageBoundsLargestOverSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	t.Parallel()
	up, down := smallChain(t)
	ctx := context.Background()
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	// abs: the seed with the largest total need not have the largest
	// share of each stage.
	set := ZoneSettings{Budget: evaluate.ErrorBudget{Kind: evaluate.ToleranceAbs, Value: 1e9}, Runs: 1, Seeds: seeds}
	all, err := Zone(ctx, up, down, set)
	if err != nil {
		t.Fatal(err)
	}
	if all.N != 36*40 {
		t.Errorf("N = %d, want the conv2d's 36x40 outputs", all.N)
	}
	for _, seed := range seeds {
		set.Seeds = []uint64{seed}
		one, err := Zone(ctx, up, down, set)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range one.Maps {
			for k, st := range m.Stages {
				got := all.Maps[i].Stages[k]
				if !(got.Bound >= st.Bound) || !(got.Limit >= st.Limit) || !(st.Limit > 0) {
					t.Fatalf("%s stage %d: over seeds %v bound %g limit %g, below seed %d's %g %g", m.Key(), k, seeds, got.Bound, got.Limit, seed, st.Bound, st.Limit)
				}
				if want := evaluate.ToleranceAbs; got.Unit != want {
					t.Fatalf("%s stage %d: unit %q, want %q", m.Key(), k, got.Unit, want)
				}
			}
		}
	}
}

package memgraph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDirtySetAgreesWithPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var d dirtySet
	for range 2000 {
		steps := int32(1 + rng.IntN(20))
		d.reset(steps)
		var added []Interval
		for range rng.IntN(6) {
			f := int32(rng.IntN(int(steps)))
			v := Interval{f, f + int32(rng.IntN(int(steps-f)))}
			d.add(v)
			added = append(added, v)
		}
		f := int32(rng.IntN(int(steps)))
		q := Interval{f, f + int32(rng.IntN(int(steps-f)))}
		want := slices.ContainsFunc(added, q.overlaps)
		if got := d.overlaps(q); got != want {
			t.Fatalf("added %v, query %v: got %v, want %v", added, q, got, want)
		}
	}
}

// TestResumeShortcutIsExact: re-placing after a move with the shortcut
// (keep the old offset of tensors no changed tensor overlaps) gives the
// very offsets a full placement of the new order gives.
func TestResumeShortcutIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for range 3000 {
		g := randomGraph(rng, false)
		c, _ := compile(g)
		if len(c.size) < 2 {
			continue
		}
		order := make([]int32, c.nops)
		for k := range order {
			order[k] = int32(k)
		}
		p := newProblem(c.size, c.align, c.intervals(order))
		pl := newPlacer(p)
		cur := sizeOrder(p)
		o, _ := pl.run(cur)
		base := slices.Clone(o)
		j := 1 + rng.IntN(len(cur)-1)
		i := rng.IntN(j)
		next := slices.Clone(cur)
		x := next[j]
		copy(next[i+1:j+1], cur[i:j])
		next[i] = x
		got, gotPeak, _ := pl.resume(next, base, i, -1, x)
		got = slices.Clone(got)
		want, wantPeak := newPlacer(p).run(next)
		if !slices.Equal(got, want) || gotPeak != wantPeak {
			t.Fatalf("shortcut %v (peak %d), full %v (peak %d)", got, gotPeak, want, wantPeak)
		}
	}
}

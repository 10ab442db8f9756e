package memgraph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxTreeAgreesWithArray: random range adds and queries against a
// plain array.
func TestMaxTreeAgreesWithArray(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 2, 7, 64, 333} {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = rng.Int64N(100)
		}
		tr := newMaxTree(vals)
		for range 2000 {
			l, r := rng.IntN(n), rng.IntN(n)
			if rng.IntN(5) == 0 {
				r = l - 1 // empty
			}
			switch rng.IntN(3) {
			case 0:
				v := rng.Int64N(50) - 20
				tr.rangeAdd(l, r, v)
				for i := l; i <= r; i++ {
					vals[i] += v
				}
			case 1:
				want := int64(math.MinInt64)
				for i := l; i <= r; i++ {
					want = max(want, vals[i])
				}
				if got := tr.rangeMax(l, r); got != want {
					t.Fatalf("n=%d max[%d,%d] = %d, want %d", n, l, r, got, want)
				}
			default:
				x := rng.Int64N(150)
				want := -1
				for i := l; i <= r; i++ {
					if vals[i] > x {
						want = i
					}
				}
				if got := tr.lastAbove(l, r, x); got != want {
					t.Fatalf("n=%d lastAbove[%d,%d] %d = %d, want %d", n, l, r, x, got, want)
				}
			}
		}
	}
}

package memgraph

import (
	"cmp"
	"fmt"
	"slices"
)

// Check verifies a plan on its own terms, independently of how it was
// made: every offset is aligned and non-negative, no tensor ends above
// peak, and no two tensors whose lifetimes overlap share a byte. It
// sweeps the op positions keeping the live tensors sorted by offset; as
// the live set is disjoint before each insertion, a new tensor need only
// be compared with its neighbours.
func Check(size, align []int64, iv []Interval, off []int64, peak int64) error {
	n := len(size)
	if len(align) != n || len(iv) != n || len(off) != n {
		return fmt.Errorf("plan check: %d sizes, %d alignments, %d intervals, %d offsets", n, len(align), len(iv), len(off))
	}
	byFirst := make([]int32, 0, n)
	for i := range n {
		if off[i] < 0 || off[i]%align[i] != 0 {
			return fmt.Errorf("plan check: tensor %d: offset %d not aligned to %d", i, off[i], align[i])
		}
		if off[i]+size[i] > peak {
			return fmt.Errorf("plan check: tensor %d: ends at %d, above the peak %d", i, off[i]+size[i], peak)
		}
		if iv[i].First < 0 || iv[i].Last < iv[i].First {
			return fmt.Errorf("plan check: tensor %d: bad interval %v", i, iv[i])
		}
		if size[i] > 0 {
			byFirst = append(byFirst, int32(i))
		}
	}
	slices.SortFunc(byFirst, func(a, b int32) int { return cmp.Compare(iv[a].First, iv[b].First) })
	var live []int32 // sorted by offset
	byOff := func(a, b int32) int { return cmp.Compare(off[a], off[b]) }
	for k := 0; k < len(byFirst); {
		t := iv[byFirst[k]].First
		live = slices.DeleteFunc(live, func(y int32) bool { return iv[y].Last < t })
		for ; k < len(byFirst) && iv[byFirst[k]].First == t; k++ {
			x := byFirst[k]
			at, _ := slices.BinarySearchFunc(live, x, byOff)
			if at > 0 {
				if y := live[at-1]; off[y]+size[y] > off[x] {
					return fmt.Errorf("plan check: tensors %d and %d overlap in memory and time", y, x)
				}
			}
			if at < len(live) {
				if y := live[at]; off[x]+size[x] > off[y] {
					return fmt.Errorf("plan check: tensors %d and %d overlap in memory and time", x, y)
				}
			}
			live = slices.Insert(live, at, x)
		}
	}
	return nil
}

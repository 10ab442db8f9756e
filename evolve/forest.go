package evolve

import (
	"math"
	"math/rand/v2"
)

// forest is a random forest of regression trees over value indices, the
// surrogate of SMAC: bootstrap samples, a random subset of the parameters
// tried at each split, the best split of those by squared error. Splits are
// "index <= t", so ordered values that sit close fall on one side; a
// categorical parameter is cut as if ordered, which trees can afford since
// they cut it again further down.
type forest struct {
	trees [][]fnode
}

// fnode is a node of a tree: a split, or a leaf (left < 0) holding the mean
// of its samples.
type fnode struct {
	feat        int
	thr         int
	left, right int32
	mean        float64
}

// forestOptions sets the forest's shape.
type forestOptions struct {
	trees    int     // number of trees
	minLeaf  int     // fewest samples in a leaf
	features float64 // share of the parameters tried at each split
}

// fitForest fits a forest to rows x (value indices, levels[f] values of
// parameter f) and targets y, drawing from rng. Each tree costs time linear
// in len(x) per level: split statistics are accumulated per value index
// rather than sorted.
func fitForest(rng *rand.Rand, x [][]int, y []float64, levels []int, opt forestOptions) *forest {
	f := &forest{}
	n := len(x)
	if n == 0 {
		return f
	}
	b := &treeBuilder{x: x, y: y, levels: levels, opt: opt, rng: rng}
	maxLevels := 0
	for _, l := range levels {
		maxLevels = max(maxLevels, l)
	}
	b.cnt, b.sum = make([]float64, maxLevels), make([]float64, maxLevels)
	for range opt.trees {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		b.nodes = nil
		b.build(idx, 0)
		f.trees = append(f.trees, b.nodes)
	}
	return f
}

type treeBuilder struct {
	x        [][]int
	y        []float64
	levels   []int
	opt      forestOptions
	rng      *rand.Rand
	nodes    []fnode
	cnt, sum []float64
	feats    []int
}

// maxDepth bounds a tree; with a minimum leaf it is rarely reached.
const maxDepth = 24

func (b *treeBuilder) build(idx []int, depth int) int32 {
	at := int32(len(b.nodes))
	mean := 0.0
	for _, i := range idx {
		mean += b.y[i]
	}
	mean /= float64(len(idx))
	b.nodes = append(b.nodes, fnode{left: -1, mean: mean})
	if len(idx) < 2*b.opt.minLeaf || depth >= maxDepth {
		return at
	}
	feat, thr, ok := b.split(idx)
	if !ok {
		return at
	}
	// Partition in place: rows going left first.
	l := 0
	for r := range idx {
		if b.x[idx[r]][feat] <= thr {
			idx[l], idx[r] = idx[r], idx[l]
			l++
		}
	}
	left := b.build(idx[:l], depth+1)
	right := b.build(idx[l:], depth+1)
	b.nodes[at] = fnode{feat: feat, thr: thr, left: left, right: right, mean: mean}
	return at
}

// split finds the best cut of idx over a random subset of the parameters:
// the one that most reduces the squared error, each side holding at least
// minLeaf rows. ok is false when no cut reduces it.
func (b *treeBuilder) split(idx []int) (feat, thr int, ok bool) {
	d := len(b.levels)
	b.feats = b.feats[:0]
	for f := range d {
		if b.levels[f] > 1 {
			b.feats = append(b.feats, f)
		}
	}
	try := max(1, int(math.Ceil(b.opt.features*float64(len(b.feats)))))
	// A partial Fisher-Yates shuffle picks the subset.
	for i := 0; i < try && i < len(b.feats); i++ {
		j := i + b.rng.IntN(len(b.feats)-i)
		b.feats[i], b.feats[j] = b.feats[j], b.feats[i]
	}
	total, n := 0.0, float64(len(idx))
	for _, i := range idx {
		total += b.y[i]
	}
	// Minimising the squared error is maximising sumL²/nL + sumR²/nR.
	base := total * total / n
	best := base + 1e-12*math.Abs(base)
	for _, f := range b.feats[:min(try, len(b.feats))] {
		k := b.levels[f]
		cnt, sum := b.cnt[:k], b.sum[:k]
		clear(cnt)
		clear(sum)
		for _, i := range idx {
			v := b.x[i][f]
			cnt[v]++
			sum[v] += b.y[i]
		}
		nl, sl := 0.0, 0.0
		for t := 0; t < k-1; t++ {
			nl += cnt[t]
			sl += sum[t]
			if cnt[t] == 0 || nl < float64(b.opt.minLeaf) {
				continue
			}
			nr := n - nl
			if nr < float64(b.opt.minLeaf) {
				break
			}
			sr := total - sl
			if g := sl*sl/nl + sr*sr/nr; g > best {
				best, feat, thr, ok = g, f, t, true
			}
		}
	}
	return feat, thr, ok
}

// predict returns the forest's mean and variance at c: the mean and the
// spread of the trees' predictions.
func (f *forest) predict(c []int) (mean, variance float64) {
	if len(f.trees) == 0 {
		return 0, 1
	}
	s, s2 := 0.0, 0.0
	for _, t := range f.trees {
		i := int32(0)
		for t[i].left >= 0 {
			if c[t[i].feat] <= t[i].thr {
				i = t[i].left
			} else {
				i = t[i].right
			}
		}
		v := t[i].mean
		s += v
		s2 += v * v
	}
	n := float64(len(f.trees))
	mean = s / n
	return mean, math.Max(s2/n-mean*mean, 0)
}

// expectedImprovement is EI for minimisation below best at a prediction
// of the given mean and standard deviation.
func expectedImprovement(best, mean, sd float64) float64 {
	if sd <= 0 {
		return math.Max(best-mean, 0)
	}
	z := (best - mean) / sd
	return (best-mean)*normCDF(z) + sd*normPDF(z)
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func normPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

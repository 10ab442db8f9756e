package genome

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
)

// A tree counts the valid configs of a space without listing them: the
// parameters are bound in order and each constraint is checked as soon as
// the last parameter it reads is bound, as enumeration does; the number of
// valid completions of a prefix depends only on the prefix's values of the
// parameters that a constraint still to be checked reads (the "live"
// parameters), so it is memoised per depth on those values alone. This is
// pyATF's chain-of-trees idea with the trees folded into a count table:
// unconstrained or independently constrained parameters multiply instead of
// nesting. The table is filled once; sampling then walks the parameters,
// choosing each value with probability proportional to its completions, so
// every valid config is drawn with probability exactly 1/count.
type tree struct {
	s      *Space
	order  []int               // order[d]: the parameter bound at depth d
	byLast [][]*Expr           // per depth: the constraints whose last parameter is bound there
	live   [][]int             // live[d]: params bound before depth d that a constraint checked at depth >= d reads
	radix  [][]uint64          // their value counts
	memo   []map[uint64]uint64 // memo[d][state of live[d]] = valid completions of depths d..n-1
	total  uint64
	states int
}

// maxTreeStates bounds the count table. A space whose live-parameter
// states may exceed it in the best order found (Σ over depths of the
// product of the live parameters' value counts), or whose count overflows
// 64 bits, is not counted; its sampler falls back to rejection (see
// sampleLarge).
const maxTreeStates = 1 << 21

var errTreeTooBig = errors.New("constraint structure too wide to count")

// constraintsByLast groups the compiled constraints by the last parameter
// they read; those that read none are returned apart.
func (s *Space) constraintsByLast() (byLast [][]*Expr, always []*Expr) {
	byLast = make([][]*Expr, len(s.params))
	for _, k := range s.cons {
		if k.last < 0 {
			always = append(always, k.expr)
			continue
		}
		byLast[k.last] = append(byLast[k.last], k.expr)
	}
	return byLast, always
}

// treeLayout is an order of the parameters with what it implies: each
// constraint's depth (where its last parameter is bound), the live
// parameters per depth, and a bound on the table's size.
type treeLayout struct {
	order  []int
	depth  []int // per constraint; -1 for one that reads no parameter
	live   [][]int
	radix  [][]uint64
	states float64 // Σ_d Π radix[d]: the table's size at most
}

func (s *Space) layout(order []int) treeLayout {
	n := len(s.params)
	pos := make([]int, n)
	for d, p := range order {
		pos[p] = d
	}
	l := treeLayout{order: order, depth: make([]int, len(s.cons)), live: make([][]int, n+1), radix: make([][]uint64, n+1)}
	for ci, k := range s.cons {
		l.depth[ci] = -1
		for _, slot := range k.expr.Slots() {
			if slot < n {
				l.depth[ci] = max(l.depth[ci], pos[slot])
			}
		}
	}
	for d := 0; d <= n; d++ {
		prod := 1.0
		for _, p := range order[:d] {
			if s.readFrom(l.depth, p, d) {
				l.live[d] = append(l.live[d], p)
				l.radix[d] = append(l.radix[d], uint64(len(s.params[p].Values)))
				prod *= float64(len(s.params[p].Values))
			}
		}
		l.states += prod
	}
	return l
}

// readFrom reports whether parameter p is read by a constraint checked at
// depth d or later.
func (s *Space) readFrom(depth []int, p, d int) bool {
	for ci, k := range s.cons {
		if depth[ci] < d {
			continue
		}
		if slices.Contains(k.expr.Slots(), p) {
			return true
		}
	}
	return false
}

// treeOrder is the parameter order of a space's tree: the space's own when
// its table fits, else a greedy one that binds next the parameter leaving
// the fewest live states (pyATF orders by where constraints bind, too).
func (s *Space) treeOrder() treeLayout {
	n := len(s.params)
	natural := make([]int, n)
	for i := range natural {
		natural[i] = i
	}
	l := s.layout(natural)
	if l.states <= maxTreeStates {
		return l
	}
	var order []int
	used := make([]bool, n)
	for len(order) < n {
		best, bestCost := -1, math.Inf(1)
		for p := range n {
			if used[p] {
				continue
			}
			// The live states after binding p, with the rest in their own order.
			try := append(slices.Clone(order), p)
			for q := range n {
				if !used[q] && q != p {
					try = append(try, q)
				}
			}
			tl := s.layout(try)
			cost := 1.0
			for _, r := range tl.radix[len(order)+1] {
				cost *= float64(r)
			}
			if cost < bestCost {
				best, bestCost = p, cost
			}
		}
		used[best] = true
		order = append(order, best)
	}
	if g := s.layout(order); g.states < l.states {
		return g
	}
	return l
}

func newTree(s *Space) (*tree, error) {
	n := len(s.params)
	l := s.treeOrder()
	if l.states > maxTreeStates {
		// Counting would take long (minutes) and much memory: give up at
		// once rather than at the bound.
		return nil, errTreeTooBig
	}
	t := &tree{s: s, order: l.order, live: l.live, radix: l.radix, byLast: make([][]*Expr, n), memo: make([]map[uint64]uint64, n+1)}
	env := s.env(s.Default())
	for ci, k := range s.cons {
		if l.depth[ci] >= 0 {
			t.byLast[l.depth[ci]] = append(t.byLast[l.depth[ci]], k.expr)
		} else if ok, err := k.expr.Truth(env); err != nil || !ok {
			return t, nil // no config can be valid: total 0
		}
	}
	for d := 0; d <= n; d++ {
		prod := uint64(1)
		for _, r := range t.radix[d] {
			hi, lo := bits.Mul64(prod, r)
			if hi != 0 {
				return nil, errTreeTooBig
			}
			prod = lo
		}
		t.memo[d] = map[uint64]uint64{}
	}
	cur := make(Config, n)
	total, err := t.count(0, cur, env)
	if err != nil {
		return nil, err
	}
	t.total = total
	return t, nil
}

func (t *tree) key(d int, cur Config) uint64 {
	k := uint64(0)
	for x, p := range t.live[d] {
		k = k*t.radix[d][x] + uint64(cur[p])
	}
	return k
}

// admits reports whether value index j of the parameter at depth d passes
// the constraints checked there, given the prefix in env; it leaves j bound.
func (t *tree) admits(d, j int, cur Config, env []Value) bool {
	p := t.order[d]
	cur[p] = j
	env[p] = t.s.params[p].Values[j]
	for _, e := range t.byLast[d] {
		if ok, err := e.Truth(env); err != nil || !ok {
			return false
		}
	}
	return true
}

// count fills the table below depth d for the prefix in cur and env.
func (t *tree) count(d int, cur Config, env []Value) (uint64, error) {
	if d == len(t.order) {
		return 1, nil
	}
	k := t.key(d, cur)
	if c, ok := t.memo[d][k]; ok {
		return c, nil
	}
	t.states++
	if t.states > maxTreeStates {
		return 0, errTreeTooBig
	}
	total := uint64(0)
	for j := range t.s.params[t.order[d]].Values {
		if !t.admits(d, j, cur, env) {
			continue
		}
		c, err := t.count(d+1, cur, env)
		if err != nil {
			return 0, err
		}
		var carry uint64
		total, carry = bits.Add64(total, c, 0)
		if carry != 0 {
			return 0, errTreeTooBig
		}
	}
	t.memo[d][k] = total
	return total, nil
}

// completions is the memoised count below depth d for the prefix in cur;
// the table holds every prefix a valid walk can reach.
func (t *tree) completions(d int, cur Config) uint64 {
	if d == len(t.order) {
		return 1
	}
	return t.memo[d][t.key(d, cur)]
}

// nth returns the valid config of rank r (0 <= r < total) in the tree's
// order: lexicographic by index along t.order, so All's order when the tree
// keeps the space's own parameter order.
func (t *tree) nth(r uint64) Config {
	cur := make(Config, len(t.order))
	env := t.s.env(t.s.Default())
	for d, p := range t.order {
		for j := range t.s.params[p].Values {
			if !t.admits(d, j, cur, env) {
				continue
			}
			c := t.completions(d+1, cur)
			if r < c {
				break
			}
			r -= c
		}
	}
	return cur
}

// alive reports whether the prefix bound before depth d (already checked)
// has a valid completion.
func (t *tree) alive(d int, cur Config) bool { return t.completions(d, cur) > 0 }

// treeOnce builds the space's tree on first use.
type treeOnce struct {
	once sync.Once
	t    *tree
	err  error
}

func (s *Space) tree() (*tree, error) {
	s.tr.once.Do(func() {
		if s.domain != nil {
			s.tr.err = errors.New("a recorded domain is enumerated, not counted")
			return
		}
		s.tr.t, s.tr.err = newTree(s)
	})
	return s.tr.t, s.tr.err
}

// Count is the exact number of valid configs, computed without listing
// them. It reports false for a space it cannot count that way: one with a
// recorded domain (use Size), or whose constraints tie together too many
// parameters at once (more than about two million distinct states of the
// parameters that constraints still to be checked read).
func (s *Space) Count() (uint64, bool) {
	if s.domain != nil {
		return uint64(s.Size()), true
	}
	t, err := s.tree()
	if err != nil {
		return 0, false
	}
	return t.total, true
}

// Listed reports whether All has been computed and is held in memory.
func (s *Space) Listed() bool { return s.all != nil }

// EnumLimit is the largest number of valid configs that the search
// strategies hold in memory as a list (All). On a larger space they sample,
// repair and search neighbourhoods through the counted tree instead.
const EnumLimit = 1 << 18

// Enumerable reports whether the space is small enough to list: it has a
// recorded domain, or at most EnumLimit valid configs.
func (s *Space) Enumerable() bool {
	if s.domain != nil {
		return true
	}
	if n, ok := s.Count(); ok {
		return n <= EnumLimit
	}
	return false
}

// maxRejections bounds the rejection sampler of a space that cannot be
// counted.
const maxRejections = 1 << 20

// sampleLarge draws a valid config of a space that is not listed: exactly
// uniform through the tree when the space can be counted; else by
// rejection (each parameter uniform, restarting as soon as a constraint
// fails), which is exactly uniform too when it succeeds within
// maxRejections restarts; past that it gives up with an error (the space is then almost
// all invalid, or empty).
func (s *Space) sampleLarge(rng *rand.Rand) (Config, error) {
	if t, err := s.tree(); err == nil {
		if t.total == 0 {
			return nil, ErrEmptySpace
		}
		return t.nth(rng.Uint64N(t.total)), nil
	}
	return s.rejectSample(rng)
}

// rejectSample draws each parameter uniformly, restarting as soon as a
// constraint fails: exactly uniform over the valid configs, at a cost of
// about one over their share of the raw combinations.
func (s *Space) rejectSample(rng *rand.Rand) (Config, error) {
	byLast, always := s.constraintsByLast()
	cur := make(Config, len(s.params))
	env := s.env(s.Default())
	for _, e := range always {
		if ok, err := e.Truth(env); err != nil || !ok {
			return nil, ErrEmptySpace
		}
	}
	for range maxRejections {
		ok := true
		for d, p := range s.params {
			cur[d] = rng.IntN(len(p.Values))
			env[d] = p.Values[cur[d]]
			for _, e := range byLast[d] {
				if v, err := e.Truth(env); err != nil || !v {
					ok = false
					break
				}
			}
			if !ok {
				break
			}
		}
		if ok {
			return cur, nil
		}
	}
	return nil, errNoSample
}

var errNoSample = errors.New("rejection sampling found no valid config")

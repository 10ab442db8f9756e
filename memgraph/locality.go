package memgraph

import (
	"errors"
	"fmt"
	"math/bits"
)

// CacheLevel is one level of a data cache with LRU replacement.
type CacheLevel struct {
	Name  string `json:"name,omitempty"`
	Size  int64  `json:"size"`  // bytes
	Line  int64  `json:"line"`  // bytes, a power of two; the same at every level
	Assoc int    `json:"assoc"` // ways; 0 means fully associative
}

// CacheSpec is a cache hierarchy, first level first. Each level sees the
// references the level above missed (as cachegrind's LL sees D1's
// misses); writes allocate like reads.
type CacheSpec struct {
	Levels []CacheLevel `json:"levels"`
	// MaxRefs bounds the trace: line references, and 4 times as many
	// expansion steps. 0 means DefaultMaxRefs.
	MaxRefs int64 `json:"max_refs,omitempty"`
}

// DefaultMaxRefs bounds a trace to about 10 s of CPU (docs/kernel-authors/memgraph.md).
const DefaultMaxRefs = 1 << 26

// MissEstimate is what Misses predicts for one plan and one cache.
type MissEstimate struct {
	Accesses  int64            `json:"accesses"`  // element accesses
	Refs      int64            `json:"refs"`      // line references after merging runs
	Lines     int64            `json:"lines"`     // distinct lines: the cold misses
	Distances []DistanceBucket `json:"distances"` // stack distance histogram of the refs
	Levels    []LevelMisses    `json:"levels"`
}

// DistanceBucket counts the references whose LRU stack distance is below
// Below and at least the previous bucket's Below; Below -1 is the bucket
// of first references (infinite distance).
type DistanceBucket struct {
	Below int64 `json:"below"`
	Refs  int64 `json:"refs"`
}

// LevelMisses is one cache level's estimate.
type LevelMisses struct {
	CacheLevel
	Refs int64 `json:"refs"` // references reaching the level
	// Misses simulates the level exactly on the trace: per-set LRU, or,
	// for a fully associative level, LRU by stack distance.
	Misses int64 `json:"misses"`
	// FullyAssociative is the misses of a fully associative LRU cache
	// of the level's size seeing every reference (cold misses plus the
	// references whose stack distance is at least its lines): the
	// classic estimate, blind to conflicts and to the levels above.
	FullyAssociative int64 `json:"fully_associative"`
}

// ErrBadCache marks an invalid CacheSpec.
var ErrBadCache = errors.New("memgraph: invalid cache spec")

func (cs CacheSpec) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadCache, fmt.Sprintf(format, args...))
	}
	if len(cs.Levels) == 0 || len(cs.Levels) > 4 {
		return bad("%d levels: want 1 to 4", len(cs.Levels))
	}
	if cs.MaxRefs < 0 {
		return bad("max_refs %d is negative", cs.MaxRefs)
	}
	for i, l := range cs.Levels {
		if l.Line < 8 || l.Line > 4096 || bits.OnesCount64(uint64(l.Line)) != 1 {
			return bad("levels[%d]: line %d: want a power of two in [8, 4096]", i, l.Line)
		}
		if l.Line != cs.Levels[0].Line {
			return bad("levels[%d]: line %d differs from levels[0]'s %d", i, l.Line, cs.Levels[0].Line)
		}
		if l.Assoc < 0 || l.Assoc > 64 {
			return bad("levels[%d]: assoc %d outside [0, 64]", i, l.Assoc)
		}
		way := l.Line * int64(max(l.Assoc, 1))
		if l.Size < way || l.Size%way != 0 || l.Size/l.Line > 1<<26 {
			return bad("levels[%d]: size %d: want a multiple of line x assoc (%d), at most %d lines", i, l.Size, way, 1<<26)
		}
	}
	return nil
}

// Misses expands every op's accesses (Op.Access, or by default each
// tensor the op reads or writes once in sequence) at the tensors'
// offsets in plan r into a trace of cache lines, in r's op order, and
// estimates the misses of cache. r must be a plan of g (from Plan or
// Layout).
func Misses(g *Graph, r *Result, cache CacheSpec) (*MissEstimate, error) {
	c, err := compile(g)
	if err != nil {
		return nil, err
	}
	if err := cache.check(); err != nil {
		return nil, err
	}
	if err := planFits(c, r); err != nil {
		return nil, err
	}
	return estimate(g, c, r, cache)
}

// planFits checks that r's order and offsets are shaped for c.
func planFits(c *compiled, r *Result) error {
	if r == nil || len(r.Order) != c.nops || len(r.Offsets) != len(c.size) {
		return fmt.Errorf("%w: the plan does not belong to the graph", ErrBadPlan)
	}
	seen := make([]bool, c.nops)
	for _, op := range r.Order {
		if op < 0 || int(op) >= c.nops || seen[op] {
			return fmt.Errorf("%w: the plan's order is not a permutation of the ops", ErrBadPlan)
		}
		seen[op] = true
	}
	for i, o := range r.Offsets {
		if o < 0 || o > MaxTotalBytes {
			return fmt.Errorf("%w: tensor %d: offset %d", ErrBadPlan, i, o)
		}
	}
	return nil
}

func estimate(g *Graph, c *compiled, r *Result, cache CacheSpec) (*MissEstimate, error) {
	lineB := cache.Levels[0].Line
	var top int64
	for i, o := range r.Offsets {
		top = max(top, o+c.size[i])
	}
	lines := top/lineB + 1
	maxRefs := cache.MaxRefs
	if maxRefs == 0 {
		maxRefs = DefaultMaxRefs
	}
	est := &MissEstimate{Levels: make([]LevelMisses, len(cache.Levels))}
	sims := make([]func(int64) bool, len(cache.Levels))
	capLines := make([]int64, len(cache.Levels))
	for i, l := range cache.Levels {
		est.Levels[i].CacheLevel = l
		capLines[i] = l.Size / l.Line
		if l.Assoc == 0 {
			rl, cl := newReuse(lines), capLines[i]
			sims[i] = func(line int64) bool { d := rl.ref(line); return d >= 0 && d < cl }
		} else {
			sims[i] = newSetLRU(l).ref
		}
	}
	// Buckets: 0 first references; b >= 1 distances in [2^(b-1)-1, 2^b-1).
	var hist [64]int64
	rd := newReuse(lines)
	t := &tracer{g: g, c: c, r: r, lineB: lineB, maxRefs: maxRefs}
	err := t.run(func(line int64) {
		d := rd.ref(line)
		if d < 0 {
			hist[0]++
			est.Lines++
		} else {
			hist[bits.Len64(uint64(d+1))]++
		}
		for i := range sims {
			if d < 0 || d >= capLines[i] {
				est.Levels[i].FullyAssociative++
			}
		}
		for i, sim := range sims {
			est.Levels[i].Refs++
			if sim(line) {
				break
			}
			est.Levels[i].Misses++
		}
	})
	if err != nil {
		if errors.Is(err, ErrTraceTooLong) {
			return nil, fmt.Errorf("%w (%d)", err, maxRefs)
		}
		return nil, err
	}
	est.Accesses, est.Refs = t.accesses, t.refs
	est.Distances = append(est.Distances, DistanceBucket{Below: -1, Refs: hist[0]})
	last := 1
	for b := 1; b < len(hist); b++ {
		if hist[b] > 0 {
			last = b
		}
	}
	for b := 1; b <= last; b++ {
		est.Distances = append(est.Distances, DistanceBucket{Below: int64(1)<<b - 1, Refs: hist[b]})
	}
	return est, nil
}

// setLRU is a set-associative LRU cache of line tags: each set's ways
// in recency order, most recent first; -1 is an empty way.
type setLRU struct {
	sets int64
	ways int
	tags []int64
}

func newSetLRU(l CacheLevel) *setLRU {
	ways := l.Assoc
	sets := l.Size / l.Line / int64(ways)
	c := &setLRU{sets: sets, ways: ways, tags: make([]int64, sets*int64(ways))}
	for i := range c.tags {
		c.tags[i] = -1
	}
	return c
}

// ref references line and says whether it hit.
func (c *setLRU) ref(line int64) bool {
	set := c.tags[(line%c.sets)*int64(c.ways):][:c.ways]
	for w, tag := range set {
		if tag == line {
			copy(set[1:w+1], set[:w])
			set[0] = line
			return true
		}
	}
	copy(set[1:], set[:c.ways-1])
	set[0] = line
	return false
}

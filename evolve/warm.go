package evolve

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/quasim/quasim/genome"
)

// Source is what a related job measured: the same kernel on another device
// class or at another problem size, its configs already mapped into the
// space being tuned (see genome.Space.Translate).
type Source struct {
	Name    string
	Results []Result
}

// RankTransfer orders the valid configs of space that the sources measured,
// most promising first. Raw times are never compared across sources, since
// devices differ in speed: within each source the valid results become
// quantiles of rank (0 for its fastest, 1 for its slowest, ties sharing
// their mean rank) and a failure scores 1; a config's score is its mean
// quantile over the sources that measured it (the mean of its results when
// one source holds several, as when the source has parameters space lacks).
// Ties keep space.All order, so the result is deterministic.
func RankTransfer(space *genome.Space, sources []Source) []genome.Config {
	sum := map[string]float64{}
	cnt := map[string]float64{}
	for _, src := range sources {
		var ok []Result
		for _, r := range src.Results {
			if r.OK {
				ok = append(ok, r)
			}
		}
		slices.SortStableFunc(ok, func(a, b Result) int { return cmp.Compare(a.Value, b.Value) })
		q := map[string][]float64{}
		for i, v := range RankQuantiles(ok) {
			k := pack(ok[i].Config)
			q[k] = append(q[k], v)
		}
		for _, r := range src.Results {
			if !r.OK {
				k := pack(r.Config)
				q[k] = append(q[k], 1)
			}
		}
		for k, vs := range q {
			m := 0.0
			for _, v := range vs {
				m += v
			}
			sum[k] += m / float64(len(vs))
			cnt[k]++
		}
	}
	type scored struct {
		c genome.Config
		s float64
	}
	var out []scored
	if space.Enumerable() {
		for _, c := range space.All() {
			k := pack(c)
			if n := cnt[k]; n > 0 {
				out = append(out, scored{c, sum[k] / n})
			}
		}
	} else {
		// Too many configs to list: rank the measured ones, in All's
		// (lexicographic) order before the sort, as above.
		for _, src := range sources {
			for _, r := range src.Results {
				k := pack(r.Config)
				if n := cnt[k]; n > 0 && space.Valid(r.Config) {
					out = append(out, scored{r.Config, sum[k] / n})
					cnt[k] = 0
				}
			}
		}
		slices.SortFunc(out, func(a, b scored) int { return slices.Compare(a.c, b.c) })
	}
	slices.SortStableFunc(out, func(a, b scored) int { return cmp.Compare(a.s, b.s) })
	cs := make([]genome.Config, len(out))
	for i, o := range out {
		cs[i] = o.c.Clone()
	}
	return cs
}

// RankQuantiles gives results sorted by value their rank quantiles: 0 for
// the first, 1 for the last, ties sharing their mean rank.
func RankQuantiles(sorted []Result) []float64 {
	out := make([]float64, len(sorted))
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j].Value == sorted[i].Value {
			j++
		}
		v := 0.0
		if len(sorted) > 1 {
			v = (float64(i+j-1) / 2) / float64(len(sorted)-1)
		}
		for k := i; k < j; k++ {
			out[k] = v
		}
		i = j
	}
	return out
}

// WarmStarter is a strategy that can take a prior ranking of configs, such
// as RankTransfer's, before its first Ask.
type WarmStarter interface {
	WarmStart(prior []genome.Config)
}

// priorHead is how many configs of a ranking of n carry its information: a
// tenth of the space's valid configs (of the ranking, on a space too large
// to list), at least twice an initial design of init. Past it the devices
// mostly disagree.
func priorHead(space *genome.Space, n, init int) int {
	if space.Enumerable() {
		return max(2*init, space.Size()/10)
	}
	return max(2*init, n/10)
}

// PriorHead is the head of a warm start's ranking, kept in a strategy's
// state: the strategy draws its random configs from it rather than from
// the whole space (πBO's initial design, sampled from the prior), and a
// model-based one weights its acquisition by a config's rank quantile.
// Call Init after decoding one.
type PriorHead struct {
	Configs []genome.Config `json:"configs"`
	Of      int             `json:"of"` // length of the whole ranking

	pos map[string]int // packed config -> position in Configs
}

// NewPriorHead keeps the head of prior, as much as a portfolio's transfer
// member follows with the default design; nil for an empty prior.
func NewPriorHead(space *genome.Space, prior []genome.Config) *PriorHead {
	if len(prior) == 0 {
		return nil
	}
	h := &PriorHead{Of: len(prior)}
	for _, c := range prior[:min(len(prior), priorHead(space, len(prior), defaultInit))] {
		if space.InRange(c) {
			h.Configs = append(h.Configs, c.Clone())
		}
	}
	h.Init()
	return h
}

// Init rebuilds the index of positions.
func (h *PriorHead) Init() {
	h.pos = make(map[string]int, len(h.Configs))
	for i, c := range h.Configs {
		if _, dup := h.pos[pack(c)]; !dup {
			h.pos[pack(c)] = i
		}
	}
}

// Check reports, with ErrBadState, a head that does not fit space.
func (h *PriorHead) Check(space *genome.Space) error {
	for i, c := range h.Configs {
		if !space.InRange(c) {
			return fmt.Errorf("%w: prior[%d] not in space", ErrBadState, i)
		}
	}
	if h.Of < len(h.Configs) {
		return fmt.Errorf("%w: prior head of %d in a ranking of %d", ErrBadState, len(h.Configs), h.Of)
	}
	return nil
}

// Quantile is c's rank quantile in the whole ranking: its position over the
// ranking's length, and 1 (the worst) for a config past the head.
func (h *PriorHead) Quantile(c genome.Config) float64 {
	if i, ok := h.pos[pack(c)]; ok {
		return float64(i) / float64(h.Of)
	}
	return 1
}

// Unknown lists the valid configs of the head for which known is false.
func (h *PriorHead) Unknown(space *genome.Space, known func(genome.Config) bool) []genome.Config {
	var out []genome.Config
	for _, c := range h.Configs {
		if !known(c) && space.Valid(c) {
			out = append(out, c)
		}
	}
	return out
}

// Sample draws a valid config of the head uniformly from those for which
// known is false; nil for a nil head or when none is left, so the caller
// falls back to the whole space.
func (h *PriorHead) Sample(rng *rand.Rand, space *genome.Space, known func(genome.Config) bool) genome.Config {
	if h == nil {
		return nil
	}
	left := h.Unknown(space, known)
	if len(left) == 0 {
		return nil
	}
	return left[rng.IntN(len(left))].Clone()
}

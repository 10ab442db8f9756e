package evolve

import (
	"cmp"
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
		for i := 0; i < len(ok); {
			j := i
			for j < len(ok) && ok[j].Value == ok[i].Value {
				j++
			}
			v := 0.0
			if len(ok) > 1 {
				v = (float64(i+j-1) / 2) / float64(len(ok)-1)
			}
			for _, r := range ok[i:j] {
				k := pack(r.Config)
				q[k] = append(q[k], v)
			}
			i = j
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

// WarmStarter is a strategy that can take a prior ranking of configs, such
// as RankTransfer's, before its first Ask.
type WarmStarter interface {
	WarmStart(prior []genome.Config)
}

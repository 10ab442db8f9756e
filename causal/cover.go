package causal

import (
	"cmp"
	"slices"
)

// Attributed is the share of the recorded end-to-end time that the
// critical path spends in spans (rows); the rest is lag: host work,
// launch latency and waits the trace does not show.
func (g *Graph) Attributed() float64 {
	if g.base == 0 {
		return 0
	}
	var in int64
	for _, i := range g.CriticalPath() {
		if !g.spans[i].Boundary {
			in += g.dur[i]
		}
	}
	return float64(in) / float64(g.base)
}

// Track is one device and stream (or thread): a resource that runs one
// span at a time.
type Track struct {
	Device string `json:"device"`
	Stream string `json:"stream"`
}

// TrackShares returns, per track, the share of the end-to-end time its
// spans run: never above 1, while rows on different tracks may add past 1
// when the tracks run at once.
func (g *Graph) TrackShares() map[Track]float64 {
	busy := map[Track]int64{}
	for i, s := range g.spans {
		if !s.Boundary && g.reaches(i) {
			busy[Track{s.Device, s.Stream}] += g.dur[i]
		}
	}
	out := make(map[Track]float64, len(busy))
	for t, b := range busy {
		if g.base > 0 {
			out[t] = float64(b) / float64(g.base)
		}
	}
	return out
}

func compareTracks(a, b Track) int {
	return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Stream, b.Stream))
}

// TrackSpread is a track's busy share over iterations.
type TrackSpread struct {
	Track
	Busy Estimate `json:"busy"`
}

func trackSpreads(per map[Track][]float64, opt SpreadOptions) []TrackSpread {
	keys := make([]Track, 0, len(per))
	for t := range per {
		keys = append(keys, t)
	}
	slices.SortFunc(keys, compareTracks)
	out := make([]TrackSpread, len(keys))
	for k, t := range keys {
		out[k] = TrackSpread{t, estimate(per[t], opt)}
	}
	return out
}

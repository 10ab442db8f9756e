package causal

import (
	"math"
	"testing"
)

// TestNearTieInfluence (synthetic): B ends 500 ns before A on another
// stream and J waits for both. B is on the critical path within the
// trace's noise: its influence is its share, not the curve's 0.
func TestNearTieInfluence(t *testing.T) {
	spans := []Span{
		{ID: 1, Pipeline: "p", Kernel: "A", Stream: "1", Start: 0, End: 1000 * us},
		{ID: 2, Pipeline: "p", Kernel: "B", Stream: "2", Start: 0, End: 1000*us - 500},
		{ID: 3, Pipeline: "p", Kernel: "J", Stream: "1", Start: 1000 * us, End: 1100 * us, Deps: []uint64{2}},
	}
	g, err := Build(spans)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Profile() {
		want := map[string]float64{"A": 1000.0 / 1100, "B": (1000 - 0.5) / 1100, "J": 100.0 / 1100}[p.Kernel]
		if math.Abs(p.Influence-want) > 1e-3 {
			t.Errorf("%s: influence %.4f, want %.4f (slack %d ns)", p.Kernel, p.Influence, want, p.Slack)
		}
	}
	// 20 µs short of A is no tie: B's influence is 0.
	spans[1].End = 980 * us
	g, _ = Build(spans)
	for _, p := range g.Profile() {
		if p.Kernel == "B" && p.Influence != 0 {
			t.Errorf("B 20 µs short: influence %v, want 0", p.Influence)
		}
	}
}

// TestAttributedAndTracks (synthetic): the critical path's time in spans,
// and each track's busy share (at most 1, while the rows' shares add past
// 1 across tracks).
func TestAttributedAndTracks(t *testing.T) {
	spans := []Span{
		{ID: 1, Pipeline: "p", Kernel: "A", Stream: "1", Start: 0, End: 400},
		{ID: 2, Pipeline: "p", Kernel: "B", Stream: "1", Start: 600, End: 1000},
		{ID: 3, Pipeline: "p", Kernel: "C", Stream: "2", Start: 0, End: 900},
		{ID: 4, Pipeline: "p", Kernel: "step", Stream: "s", Start: 0, End: 0, Boundary: true},
	}
	g, err := Build(spans)
	if err != nil {
		t.Fatal(err)
	}
	// A, a 200 ns lag, B: 800 of 1000 ns in spans.
	if a := g.Attributed(); math.Abs(a-0.8) > 1e-9 {
		t.Errorf("attributed %v, want 0.8", a)
	}
	tr := g.TrackShares()
	if tr[Track{"", "1"}] != 0.8 || tr[Track{"", "2"}] != 0.9 || len(tr) != 2 {
		t.Errorf("track shares %v", tr)
	}
	for _, p := range g.Profile() {
		if p.Kernel == "step" {
			t.Error("a boundary is a row")
		}
	}
	spans[3].End = 5
	if _, err := Build(spans); err == nil {
		t.Error("a boundary lasting 5 ns: no error")
	}
}

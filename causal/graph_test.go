package causal

import (
	"slices"
	"testing"
)

// known is a hand-checked graph: its critical path (span indices), slacks,
// and end-to-end times under changes.
type known struct {
	name     string
	spans    []Span
	e2e      int64
	critical []int
	slack    []int64
	what     []whatIf
}

type whatIf struct {
	changes []Change
	e2e     int64
}

func knownGraphs() []known {
	return []known{{
		name:     "chain",
		spans:    []Span{sp(1, "a", "s", 0, 100), sp(2, "b", "s", 120, 300), sp(3, "c", "s", 300, 350)},
		e2e:      350,
		critical: []int{0, 1, 2},
		slack:    []int64{0, 0, 0},
		what: []whatIf{
			{[]Change{Faster("a", 50)}, 300},
			{[]Change{Faster("a", 50), Faster("c", 100)}, 250},
			{[]Change{At("b", 10)}, 180},
			{[]Change{Faster("b", -10)}, 368},
		},
	}, {
		// a forks b (same stream) and c (other stream); d joins both.
		name: "fork-join",
		spans: []Span{sp(1, "a", "s1", 0, 100), sp(2, "b", "s1", 100, 400),
			sp(3, "c", "s2", 110, 210, 1), sp(4, "d", "s1", 400, 450, 3)},
		e2e:      450,
		critical: []int{0, 1, 3},
		slack:    []int64{0, 0, 190, 0},
		what: []whatIf{
			{[]Change{Faster("c", 50)}, 450},
			{[]Change{Faster("b", 5)}, 435},
			{[]Change{Faster("b", 50)}, 300},
			{[]Change{Faster("b", 90)}, 260}, // c is critical now
			{[]Change{Faster("b", 90), Faster("c", 50)}, 210},
		},
	}, {
		// a on s1 feeds b (s1) and c (s2); d on s3 waits for both, 5 later.
		name: "diamond",
		spans: []Span{sp(1, "a", "s1", 0, 10), sp(2, "b", "s1", 10, 30),
			sp(3, "c", "s2", 12, 26, 1), sp(4, "d", "s3", 35, 40, 2, 3)},
		e2e:      40,
		critical: []int{0, 1, 3},
		slack:    []int64{0, 0, 4, 0},
		what: []whatIf{
			{[]Change{Faster("b", 50)}, 36}, // b ends 20, c 26: d starts 31
			{[]Change{Faster("c", 50)}, 40},
			{[]Change{Faster("c", -50)}, 43},
			{[]Change{At("a", 0)}, 30},
		},
	}, {
		// Two streams with cross dependencies: b1 waits for a1, a3 for b1.
		name: "two streams",
		spans: []Span{sp(1, "a", "s1", 0, 10), sp(2, "a", "s1", 10, 20), sp(3, "a3", "s1", 25, 30, 4),
			sp(4, "b1", "s2", 12, 22, 1), sp(5, "b2", "s2", 22, 40)},
		e2e:      40,
		critical: []int{0, 3, 4},
		slack:    []int64{0, 12, 10, 0, 0},
		what: []whatIf{
			{[]Change{Faster("b1", 50)}, 35},
			{[]Change{Faster("a3", 100)}, 40},
			{[]Change{Faster("a", 50)}, 35}, // a1 and a2 both halve
			{[]Change{{Kernel: "b2", Set: true, Duration: 1}, Faster("a", 0)}, 30},
		},
	}, {
		// A kernel that starts before the launch it depends on ends
		// (negative lag) and a problem-specific change.
		name: "negative lag",
		spans: []Span{{ID: 1, Pipeline: "p", Kernel: "launch", Stream: "cpu", Start: 0, End: 10},
			{ID: 2, Pipeline: "p", Kernel: "k", Problem: "big", Stream: "gpu", Start: 8, End: 108, Deps: []uint64{1}},
			{ID: 3, Pipeline: "p", Kernel: "k", Problem: "small", Stream: "gpu", Start: 108, End: 118}},
		e2e:      118,
		critical: []int{0, 1, 2},
		slack:    []int64{0, 0, 0},
		what: []whatIf{
			{[]Change{{Kernel: "k", Problem: "big", Scale: 0.5}}, 68},
			{[]Change{{Kernel: "k", Problem: "small", Scale: 0.5}}, 113},
			{[]Change{Faster("launch", 100)}, 108},
		},
	}}
}

func TestKnownGraphs(t *testing.T) {
	for _, k := range knownGraphs() {
		g, err := Build(k.spans)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		checkReplay(t, g)
		if g.EndToEnd() != k.e2e {
			t.Errorf("%s: end-to-end %d, want %d", k.name, g.EndToEnd(), k.e2e)
		}
		if got := g.CriticalPath(); !slices.Equal(got, k.critical) {
			t.Errorf("%s: critical path %v, want %v", k.name, got, k.critical)
		}
		if got := g.Slack(); !slices.Equal(got, k.slack) {
			t.Errorf("%s: slack %v, want %v", k.name, got, k.slack)
		}
		for _, w := range k.what {
			got, err := g.Simulate(w.changes...)
			if err != nil || got != w.e2e {
				t.Errorf("%s: %+v gives %d (%v), want %d", k.name, w.changes, got, err, w.e2e)
			}
		}
	}
}

// buildKnown builds the known graph of that name.
func buildKnown(t *testing.T, name string) *Graph {
	t.Helper()
	graphs := knownGraphs()
	k := slices.IndexFunc(graphs, func(k known) bool { return k.name == name })
	g, err := Build(graphs[k].spans)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSlackTo: slack against the end of some spans only (stream s1 of the
// two-stream graph): b2 reaches none of them, a2 may take 2 longer before
// a3 (waiting for b1) would wait for it instead.
func TestSlackTo(t *testing.T) {
	g := buildKnown(t, "two streams")
	got := g.SlackTo(func(i int) bool { return g.Spans()[i].Stream == "s1" })
	if want := []int64{0, 2, 0, 0, MaxTime}; !slices.Equal(got, want) {
		t.Errorf("SlackTo(s1) = %v, want %v", got, want)
	}
	if got, want := g.SlackTo(nil), g.Slack(); !slices.Equal(got, want) {
		t.Errorf("SlackTo(nil) = %v, Slack() = %v", got, want)
	}
}

// TestEndAt: the two-stream graph measured to stream s1's end (a3 at
// 30), not to b2's at 40: b2 cannot move it and is no row, b1 bounds it.
func TestEndAt(t *testing.T) {
	g := buildKnown(t, "two streams")
	v := g.EndAt(func(i int) bool { return g.Spans()[i].Stream == "s1" })
	checkReplay(t, v)
	if v.EndToEnd() != 30 || g.EndToEnd() != 40 {
		t.Errorf("end to end %d (whole %d), want 30 (40)", v.EndToEnd(), g.EndToEnd())
	}
	if got, want := v.CriticalPath(), []int{0, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("critical path %v, want %v", got, want)
	}
	if got, want := v.Slack(), []int64{0, 2, 0, 0, MaxTime}; !slices.Equal(got, want) {
		t.Errorf("slack %v, want %v", got, want)
	}
	for _, w := range []whatIf{{[]Change{Faster("b1", 50)}, 28}, {[]Change{At("b2", 100)}, 30}, {[]Change{At("a3", 0)}, 25}} {
		if got, err := v.Simulate(w.changes...); err != nil || got != w.e2e {
			t.Errorf("%+v gives %d (%v), want %d", w.changes, got, err, w.e2e)
		}
	}
	var rows []string
	for _, p := range v.Profile() {
		rows = append(rows, p.Kernel)
	}
	if want := []string{"a", "a3", "b1"}; !slices.Equal(rows, want) {
		t.Errorf("rows %v, want %v (b2 cannot move the end)", rows, want)
	}
	if got := v.TrackShares()[Track{Device: "d", Stream: "s2"}]; got != 10.0/30 {
		t.Errorf("s2 busy %v of the view, want b1's 10 of 30", got)
	}
	if v.Attributed() != 25.0/30 {
		t.Errorf("attributed %v: the path a1, b1, a3 is 25 of 30", v.Attributed())
	}
	if g.EndAt(func(int) bool { return false }) != g {
		t.Error("with no sink, EndAt is not the graph")
	}
}

func TestProfileForkJoin(t *testing.T) {
	g, err := Build(knownGraphs()[1].spans)
	if err != nil {
		t.Fatal(err)
	}
	prof := g.Profile()
	byName := map[string]KernelProfile{}
	for _, p := range prof {
		byName[p.Kernel] = p
	}
	b, c := byName["b"], byName["c"]
	if b.Time != 300 || b.CriticalTime != 300 || b.Slack != 0 || b.Share != 300.0/450 {
		t.Errorf("b: %+v", b)
	}
	// b 5% faster saves 15 of 450: influence 15/450/0.05 = b's share.
	if d := b.Influence - 300.0/450; d > 1e-12 || d < -1e-12 {
		t.Errorf("b influence %v, want %v", b.Influence, 300.0/450)
	}
	if b.Curve[10].KernelSpeedup != 0.5 || b.Curve[10].Speedup != 150.0/450 {
		t.Errorf("b at 50%%: %+v", b.Curve[10])
	}
	if c.Influence != 0 || c.CriticalTime != 0 || c.Slack != 190 {
		t.Errorf("c (off the critical path): %+v", c)
	}
	for _, pt := range c.Curve {
		if pt.Speedup != 0 {
			t.Errorf("c gains %v at %v", pt.Speedup, pt.KernelSpeedup)
		}
	}
}

func TestSimulateRejectsBadChanges(t *testing.T) {
	g, err := Build(knownGraphs()[0].spans)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Change{Faster("nope", 5), {Kernel: "a", Scale: -1}, {Kernel: "a", Scale: MaxScale + 1},
		{Kernel: "a", Set: true, Duration: -1}, {Kernel: "a", Set: true, Duration: MaxDuration + 1}} {
		if _, err := g.Simulate(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

package causal

import (
	"errors"
	"strings"
	"testing"
)

// sp makes a span of pipeline "p" on device "d".
func sp(id uint64, kernel, stream string, start, end int64, deps ...uint64) Span {
	return Span{ID: id, Pipeline: "p", Kernel: kernel, Device: "d", Stream: stream, Start: start, End: end, Deps: deps}
}

func TestValidateNamesIndexAndField(t *testing.T) {
	ok := func() []Span { return []Span{sp(1, "a", "s", 0, 10), sp(2, "b", "s", 10, 20, 1)} }
	cases := []struct {
		name  string
		edit  func([]Span) []Span
		index int
		field string
		text  string
	}{
		{"missing id", func(s []Span) []Span { s[1].ID = 0; return s }, 1, "id", "missing"},
		{"duplicate id", func(s []Span) []Span { s[1].ID = 1; return s }, 1, "id", "also span 0"},
		{"no kernel", func(s []Span) []Span { s[0].Kernel = ""; return s }, 0, "kernel", "missing"},
		{"no pipeline", func(s []Span) []Span { s[0].Pipeline = ""; return s }, 0, "pipeline", "missing"},
		{"two pipelines", func(s []Span) []Span { s[1].Pipeline = "q"; return s }, 1, "pipeline", "one pipeline"},
		{"negative iteration", func(s []Span) []Span { s[1].Iteration = -1; return s }, 1, "iteration", "negative"},
		{"ends before start", func(s []Span) []Span { s[1].End = 5; return s }, 1, "end_ns", "ends before it starts"},
		{"too long", func(s []Span) []Span { s[1].End = s[1].Start + MaxDuration + 1; return s }, 1, "end_ns", "2^44"},
		{"time out of range", func(s []Span) []Span { s[0].Start = -MaxTime; return s }, 0, "start_ns", "2^62"},
		{"unknown dep", func(s []Span) []Span { s[1].Deps = []uint64{1, 9}; return s }, 1, "deps[1]", "unknown span id 9"},
		{"self dep", func(s []Span) []Span { s[1].Deps = []uint64{2}; return s }, 1, "deps[0]", "itself"},
		{"overlap on a stream", func(s []Span) []Span { s[1].Start = 9; return s }, 1, "start_ns", "overlaps span 0"},
		{"cycle of deps", func(s []Span) []Span {
			return []Span{sp(1, "a", "s1", 0, 10, 2), sp(2, "b", "s2", 0, 10, 1)}
		}, 0, "deps", "cycle"},
		{"cycle through program order", func(s []Span) []Span {
			return []Span{sp(1, "a", "s1", 0, 10, 3), sp(2, "b", "s1", 10, 20), sp(3, "c", "s2", 0, 5, 2)}
		}, 0, "deps", "0 (id 1) -> 1 (id 2) -> 2 (id 3) -> 0 (id 1)"},
	}
	if err := Validate(ok()); err != nil {
		t.Fatalf("valid batch: %v", err)
	}
	for _, c := range cases {
		err := Validate(c.edit(ok()))
		var se *SpanError
		if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSpan) {
			t.Errorf("%s: error %v, want a SpanError", c.name, err)
			continue
		}
		if se.Index != c.index || se.Field != c.field || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want span %d field %s saying %q", c.name, err, c.index, c.field, c.text)
		}
	}
	if err := Validate(nil); !errors.Is(err, ErrInvalidSpan) {
		t.Errorf("empty batch: %v", err)
	}
}

func TestCycleIsErrCycle(t *testing.T) {
	err := Validate([]Span{sp(1, "a", "s1", 0, 10, 2), sp(2, "b", "s2", 0, 10, 1)})
	if !errors.Is(err, ErrCycle) {
		t.Fatalf("%v is not ErrCycle", err)
	}
}

func TestDecodeSpans(t *testing.T) {
	good := `[{"id":1,"pipeline":"p","kernel":"a","stream":"s","start_ns":0,"end_ns":10},
	          {"id":2,"pipeline":"p","kernel":"b","stream":"s","start_ns":12,"end_ns":20,"deps":[1]}]`
	spans, err := DecodeSpans([]byte(good))
	if err != nil || len(spans) != 2 || spans[1].Deps[0] != 1 {
		t.Fatalf("DecodeSpans = %v, %v", spans, err)
	}
	for name, bad := range map[string]string{
		"unknown field": `[{"id":1,"pipeline":"p","kernel":"a","start_ns":0,"end_ns":1,"colour":"red"}]`,
		"trailing data": `[{"id":1,"pipeline":"p","kernel":"a","start_ns":0,"end_ns":1}] []`,
		"not an array":  `{"id":1}`,
		"truncated":     `[{"id":1,`,
		"invalid span":  `[{"id":1,"pipeline":"p","kernel":"a","start_ns":5,"end_ns":1}]`,
	} {
		if _, err := DecodeSpans([]byte(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzDecodeSpans(f *testing.F) {
	f.Add([]byte(`[{"id":1,"pipeline":"p","kernel":"a","stream":"s","start_ns":0,"end_ns":10},{"id":2,"pipeline":"p","kernel":"b","stream":"t","start_ns":12,"end_ns":20,"deps":[1]}]`))
	f.Add([]byte(`[{"id":1,"pipeline":"p","kernel":"a","start_ns":0,"end_ns":10,"deps":[2]},{"id":2,"pipeline":"p","kernel":"b","stream":"t","start_ns":0,"end_ns":20,"deps":[1]}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := DecodeSpans(data)
		if err != nil {
			return
		}
		g, err := Build(spans)
		if err != nil {
			t.Fatalf("decoded spans do not build: %v", err)
		}
		checkReplay(t, g)
		checkProfile(t, g)
	})
}

// checkReplay fails unless replaying g's recorded durations gives back
// every recorded start and end.
func checkReplay(t *testing.T, g *Graph) {
	t.Helper()
	spans := g.Spans()
	dur := make([]int64, len(spans))
	for i, s := range spans {
		dur[i] = s.Duration()
	}
	start, end := make([]int64, len(spans)), make([]int64, len(spans))
	if e2e := g.Replay(dur, start, end); e2e != g.EndToEnd() {
		t.Fatalf("replay end-to-end %d, recorded %d", e2e, g.EndToEnd())
	}
	for i, s := range spans {
		if start[i] != s.Start || end[i] != s.End {
			t.Fatalf("span %d replays as [%d, %d], recorded [%d, %d]", i, start[i], end[i], s.Start, s.End)
		}
	}
}

// checkProfile fails unless slack is never negative and the critical path's
// kernels have zero slack.
func checkProfile(t *testing.T, g *Graph) {
	t.Helper()
	for i, sl := range g.Slack() {
		if sl < 0 {
			t.Fatalf("span %d: slack %d", i, sl)
		}
	}
	for _, p := range g.Profile() {
		if p.CriticalTime > 0 && p.Slack != 0 {
			t.Fatalf("kernel %s on the critical path has slack %d", p.Kernel, p.Slack)
		}
	}
}

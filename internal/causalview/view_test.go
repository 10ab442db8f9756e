package causalview

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quasim/quasim/causal"
)

func span(id uint64, it int, kernel string, start, end int64, deps ...uint64) causal.Span {
	return causal.Span{ID: id, Pipeline: "p", Iteration: it, Kernel: kernel, Stream: "s", Start: start, End: end, Deps: deps}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	batches := []Batch{
		// run 0: iteration 0, and iteration 1 in two batches
		{Label: "batch 1", Spans: []causal.Span{span(1, 0, "a", 0, 10), span(2, 0, "b", 10, 20, 1), span(3, 1, "a", 30, 40, 2)}},
		{Label: "batch 2", Spans: []causal.Span{span(1, 1, "b", 40, 50)}},
		{Label: "batch 3", Err: errors.New("no longer decodes")},
		// run 1: restarted at iteration 0, on a clock that overlaps run 0's
		{Label: "batch 4", Spans: []causal.Span{span(1, 0, "a", 5, 15), span(2, 0, "b", 15, 25, 1)}},
		// still run 1: iteration 0 again, overlapping: that iteration does not build
		{Label: "batch 5", Spans: []causal.Span{span(1, 0, "a", 6, 16)}},
	}
	iters, skipped := Split(batches)
	var got []string
	for _, it := range iters {
		var ids []string
		for _, s := range it {
			ids = append(ids, fmt.Sprintf("%d:%s%v", s.ID, s.Kernel, s.Deps))
		}
		got = append(got, fmt.Sprintf("it%d[%s]", it[0].Iteration, strings.Join(ids, " ")))
	}
	// Ids are renumbered 1.. across batches; span 3's dependency on span
	// 2, in iteration 0, is dropped.
	if want := "it0[1:a[] 2:b[1]] it1[3:a[] 4:b[]]"; strings.Join(got, " ") != want {
		t.Errorf("Split iterations = %s, want %s", strings.Join(got, " "), want)
	}
	if len(skipped) != 2 || skipped[0] != "batch 3: no longer decodes" || !strings.HasPrefix(skipped[1], "iteration 0 of run 1: span 2: start_ns: overlaps span 0") {
		t.Errorf("skipped %q", skipped)
	}
	p, err := Profile("p", len(batches), iters, skipped, Tuned{})
	if err != nil || p.Iterations != 2 || p.Spans != 4 || p.Batches != 5 || len(p.Kernels) != 2 || len(p.Skipped) != 2 {
		t.Errorf("Profile = %+v, %v", p, err)
	}
	// a and b run one after the other on one stream: a's slack is 0 in
	// both iterations.
	for _, k := range p.Kernels {
		if k.Kernel == "a" && (k.Slack.N != 2 || k.Slack.Min != 0 || k.Slack.Max != 0) {
			t.Errorf("slack of a %+v", k.Slack)
		}
	}
}

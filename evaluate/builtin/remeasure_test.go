package builtin_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
)

// TestRemeasure measures one config again, 10 times by the search's
// protocol (Evaluate), and logs the median and range of the 10 times: a
// tool for comparing a served config's search time with what it takes now
// (docs/evidence/served-times.md). QUASIM_REMEASURE="KERNEL PROBLEM KEY",
// e.g. "sgemm 256,256,256 64,32,32,2,1,False,ikj,fp32".
func TestRemeasure(t *testing.T) {
	arg := strings.Fields(os.Getenv("QUASIM_REMEASURE"))
	if len(arg) != 3 {
		t.Skip(`skipping: set QUASIM_REMEASURE="KERNEL PROBLEM KEY" to measure a config again`)
	}
	k, err := builtin.New(arg[0], builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var p evaluate.Problem
	for _, d := range strings.Split(arg[1], ",") {
		n, err := strconv.Atoi(d)
		if err != nil {
			t.Fatalf("problem %q: %v", arg[1], err)
		}
		p.Dims = append(p.Dims, n)
	}
	sp, err := k.Space(p)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sp.ParseKey(arg[2])
	if err != nil {
		t.Fatal(err)
	}
	var ts []float64
	for range 10 {
		tr, err := k.Evaluate(context.Background(), c, p)
		if err != nil || !tr.OK() {
			t.Fatalf("%s: %v %s", tr.Status, err, tr.Error)
		}
		ts = append(ts, tr.Time)
	}
	lo, hi := ts[0], ts[0]
	for _, x := range ts {
		lo, hi = min(lo, x), max(hi, x)
	}
	t.Logf("%s %s %s: median of 10 measurements %.3g ms, %.3g to %.3g", arg[0], arg[1], arg[2], evaluate.Median(ts), lo, hi)
}

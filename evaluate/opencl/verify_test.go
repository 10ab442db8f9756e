package opencl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/testload"
)

// Verify reports the worker's element-wise comparison with the reference
// config check.reference names, its tolerance and its worst element, not
// a checksum against the parameters' first values: here the first value
// of block_size_x (8192) is a work-group no CPU device takes.
func TestVerifyRecordsReferenceComparison(t *testing.T) {
	needDevice(t)
	k := scaleKernel(t)
	k.Params[0].Values = []any{8192, 128, 64, 32} // descending, the first too large
	k.Params[2].Values = []any{0, 1}
	k.Check.Reference = map[string]any{"block_size_x": 64, "work_per_item": 2}
	k.Problems = [][]int{{10000}}
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	p := evaluate.Problem{Dims: []int{10000}, Names: []string{"n"}}
	s := evaluate.VerifySettings{}
	rep, err := ev.Verify(context.Background(), genome.Config{1, 2, 0}, p, s)
	if err != nil {
		t.Fatal(err)
	}
	par := rep.Parity
	if !rep.Passed() || !par.Passed {
		t.Fatalf("a correct config failed: %+v", rep)
	}
	if want := "the output of the reference config 64,2,0"; par.Reference != want {
		t.Errorf("reference %q, want %q", par.Reference, want)
	}
	if par.Tolerance != "rel" || par.Value != 1e-6 || !strings.Contains(par.Worst, "y[") || !strings.Contains(par.Cases[0], "10000 elements") {
		t.Errorf("parity %+v: want rel 1e-6, the worst element of y and 10000 elements compared", par)
	}
	// A wrong config fails against the same reference, naming the element.
	rep, err = ev.Verify(context.Background(), genome.Config{1, 2, 1}, p, s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Parity.Passed || !strings.Contains(rep.Parity.Worst, "[7]") {
		t.Errorf("wrong config: parity %+v, want failed at y[7]", rep.Parity)
	}
}

// A reference config that cannot run fails the kernel's start, saying so,
// instead of every config failing its check.
func TestReferenceCannotRun(t *testing.T) {
	needDevice(t)
	k := scaleKernel(t)
	k.Check.Reference = map[string]any{"block_size_x": 8192}
	k.Problems = [][]int{{10000}}
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(10 * time.Second)})
	if err == nil {
		ev.Close()
		t.Fatal("New started with a reference config that cannot run")
	}
	if !strings.Contains(err.Error(), "the reference config 8192,1,0") || !strings.Contains(err.Error(), "did not run") {
		t.Errorf("New = %v, want the reference config named and that it did not run", err)
	}
}

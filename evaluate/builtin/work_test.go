package builtin

import (
	"testing"

	"github.com/quasim/quasim/evaluate"
)

func TestWork(t *testing.T) {
	for _, c := range []struct {
		kernel string
		dims   []int
		want   evaluate.Work
	}{
		{"sgemm", []int{64, 32, 16}, evaluate.Work{Flops: 2 * 64 * 32 * 16, Bytes: 4 * (64*16 + 16*32 + 64*32)}},
		{"conv2d", []int{100, 80, 5}, evaluate.Work{Flops: 2 * 25 * 96 * 76, Bytes: 4 * (100*80 + 25 + 96*76)}},
		{"reduce", []int{1000}, evaluate.Work{Flops: 999, Bytes: 4 * 1001}},
	} {
		k, err := New(c.kernel, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var w evaluate.Worker = k
		got, ok := w.Work(evaluate.Problem{Dims: c.dims})
		if !ok || got != c.want {
			t.Errorf("%s %v: %+v %v, want %+v", c.kernel, c.dims, got, ok, c.want)
		}
		if _, ok := w.Work(evaluate.Problem{Dims: []int{1}}); ok && c.kernel != "reduce" {
			t.Errorf("%s: work of a problem with the wrong dims", c.kernel)
		}
	}
}

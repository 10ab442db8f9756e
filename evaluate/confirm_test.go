package evaluate

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/quasim/quasim/genome"
)

// procs plays processes whose times for a config are given per process:
// times[key][i] is what the i-th fresh process measures; a negative time
// is a failed run.
type procs struct {
	space  *genome.Space
	times  map[string][]float64
	starts int
	first  []string // the config each process measured first
	err    error    // Fresh fails with it
}

type proc struct {
	*procs
	i int
}

func (r *procs) Fresh(ctx context.Context, p Problem) (Evaluator, func(), error) {
	if r.err != nil {
		return nil, nil, r.err
	}
	r.starts++
	return &proc{procs: r, i: r.starts - 1}, func() {}, nil
}

func (p *proc) Space(Problem) (*genome.Space, error) { return p.space, nil }
func (p *proc) Device() string                       { return "test" }
func (p *proc) Evaluate(ctx context.Context, c genome.Config, _ Problem) (Trial, error) {
	k := p.space.Key(c)
	if len(p.first) == p.i {
		p.first = append(p.first, k)
	}
	t := p.times[k][p.i]
	if t < 0 {
		return Trial{Key: k, Status: StatusRuntime}, nil
	}
	return Trial{Key: k, Status: StatusOK, Time: t}, nil
}

// A config whose search time was a lucky process's loses to one that is
// as fast in every process; one that fails in fresh processes ranks last
// with no median; each process starts at another config.
func TestConfirm(t *testing.T) {
	sp, err := genome.NewSpace([]genome.Param{{Name: "x", Values: []genome.Value{genome.Int(1), genome.Int(2), genome.Int(3)}}}, genome.SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &procs{space: sp, times: map[string][]float64{
		"1": {2.0, 2.2, 1.9}, // 1.0 in the search
		"2": {1.5, 1.4, 0},   // 0 ms cannot be: a failure
		"3": {-1, -1, 1.0},
	}}
	var fs []Finalist
	for i, t0 := range []float64{1.0, 1.4, 1.45} {
		c, _ := sp.ParseKey([]string{"1", "2", "3"}[i])
		fs = append(fs, Finalist{Config: c, Key: sp.Key(c), TimesMS: []float64{t0}})
	}
	out, err := Confirm(context.Background(), r, Problem{Dims: []int{1}}, fs, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range out {
		keys = append(keys, f.Key)
	}
	if !slices.Equal(keys, []string{"2", "1", "3"}) {
		t.Fatalf("ranked %v, want 2, 1, 3: %+v", keys, out)
	}
	if out[0].MedianMS != 1.45 || len(out[0].TimesMS) != 3 || out[0].Failed != 1 {
		t.Errorf("2: %+v, want median 1.45 of 3 times and a failure", out[0])
	}
	if out[2].Failed != 2 || out[2].MedianMS != 0 || len(out[2].TimesMS) != 2 {
		t.Errorf("3: %+v, want 2 failures, no median, 2 times", out[2])
	}
	if r.starts != 3 || !slices.Equal(r.first, []string{"1", "2", "3"}) {
		t.Errorf("%d processes starting at %v, want 3 starting at 1, 2, 3", r.starts, r.first)
	}
	if fs[0].TimesMS[0] != 1.0 || len(fs[0].TimesMS) != 1 {
		t.Errorf("the finalists given were changed: %+v", fs[0])
	}
	calls := 0
	if _, err := Confirm(context.Background(), &procs{space: sp, times: r.times}, Problem{}, fs, 1, func(genome.Config) (func(), error) {
		calls++
		return func() {}, nil
	}); err != nil || calls != 3 {
		t.Errorf("around called %d times (%v), want once a measurement", calls, err)
	}
	knob := errors.New("no privilege")
	if _, err := Confirm(context.Background(), &procs{space: sp, times: r.times}, Problem{}, fs, 1, func(genome.Config) (func(), error) {
		return nil, knob
	}); !errors.Is(err, knob) {
		t.Errorf("around failing: %v", err)
	}
	boom := errors.New("no worker")
	if _, err := Confirm(context.Background(), &procs{space: sp, err: boom}, Problem{}, fs, 3, nil); !errors.Is(err, boom) {
		t.Errorf("Fresh failing: %v", err)
	}
}

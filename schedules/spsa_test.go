package schedules

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/evolve/evolvetest"
	"github.com/quasim/quasim/genome"
)

func factory(s *genome.Space, seed uint64) evolve.Strategy { return New(s, seed, Options{}) }

func randomFactory(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewRandom(s, seed) }

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i + 1
		}
	}
	return min(len(a), len(b)) + 1
}

func TestNewNilSpacePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil) did not panic")
		}
	}()
	New(nil, 1, Options{})
}

func TestExhaustsNoRepeats(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	for _, batch := range []int{1, 3, 4} {
		t.Run(fmt.Sprint("batch", batch), func(t *testing.T) {
			run, err := evolve.Run(context.Background(), bs, factory, 7, evolve.RunOptions{Budget: bs.Size + 10, Batch: batch})
			if err != nil { // Measure fails on an invalid config
				t.Fatal(err)
			}
			if len(run.Trace) != bs.Size {
				t.Fatalf("measured %d configs, want all %d", len(run.Trace), bs.Size)
			}
			seen := map[string]bool{}
			for _, m := range run.Trace {
				if seen[m.Key] {
					t.Fatalf("measured %q twice", m.Key)
				}
				seen[m.Key] = true
			}
		})
	}
}

func TestDeterministicAndResume(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	for _, batch := range []int{1, 2, 3, 4} {
		for _, at := range []int{9, 50, 101} {
			t.Run(fmt.Sprintf("batch%d/at%d", batch, at), func(t *testing.T) {
				opt := evolve.RunOptions{Budget: 200, Batch: batch}
				a, err := evolve.Run(context.Background(), bs, factory, 3, opt)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := evolve.Run(context.Background(), bs, factory, 3, opt)
				if !slices.Equal(evolvetest.Keys(a.Trace), evolvetest.Keys(b.Trace)) {
					t.Fatal("same seed gave different traces")
				}
				opt.RoundTripAt = at
				c, err := evolve.Run(context.Background(), bs, factory, 3, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(evolvetest.Keys(a.Trace), evolvetest.Keys(c.Trace)) {
					t.Fatalf("resumed run differs at evaluation %d", firstDiff(evolvetest.Keys(a.Trace), evolvetest.Keys(c.Trace)))
				}
				d, _ := evolve.Run(context.Background(), bs, factory, 4, evolve.RunOptions{Budget: 200, Batch: batch})
				if slices.Equal(evolvetest.Keys(a.Trace), evolvetest.Keys(d.Trace)) {
					t.Fatal("seeds 3 and 4 gave the same trace")
				}
			})
		}
	}
}

// Proposals are valid and never repeat a told config, also when the told
// configs came from elsewhere.
func TestNeverProposesMeasured(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	rng := rand.New(rand.NewPCG(9, 9))
	var told []evolve.Result
	for range 40 {
		c, _ := bs.Space.Sample(rng)
		m, _ := bs.Measure(c)
		told = append(told, evolve.Result{Config: c, OK: m.OK, Value: m.Time})
	}
	a, b := New(bs.Space, 11, Options{}), New(bs.Space, 11, Options{})
	for _, s := range []*SPSA{a, b} {
		if err := s.Tell(told); err != nil {
			t.Fatal(err)
		}
	}
	measured := map[string]bool{}
	for _, r := range told {
		measured[bs.Space.Key(r.Config)] = true
	}
	for round := range 60 {
		pa, _ := a.Ask(3)
		pb, _ := b.Ask(3)
		if !slices.EqualFunc(pa, pb, genome.Config.Equal) {
			t.Fatalf("round %d: proposals differ after the same trials", round)
		}
		var res []evolve.Result
		for _, c := range pa {
			k := bs.Space.Key(c)
			if !bs.Space.Valid(c) {
				t.Fatalf("proposed invalid %v", c)
			}
			if measured[k] {
				t.Fatalf("proposed measured %s", k)
			}
			measured[k] = true
			m, _ := bs.Measure(c)
			res = append(res, evolve.Result{Config: c, OK: m.OK, Value: m.Time})
		}
		_ = a.Tell(res)
		_ = b.Tell(res)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	s := New(bs.Space, 1, Options{})
	if err := s.Tell([]evolve.Result{{Config: genome.Config{99, 0, 0, 0, 0}}}); !errors.Is(err, evolve.ErrBadResult) {
		t.Errorf("Tell(out of range) = %v, want ErrBadResult", err)
	}
	good, _ := New(bs.Space, 2, Options{}).MarshalBinary()
	for _, bad := range [][]byte{
		nil, []byte("{}"), []byte("garbage"),
		[]byte(`{"v":1,"kind":"es"}`),
		[]byte(`{"v":1,"kind":"schedules-spsa","rng":"x"}`),
		[]byte(`{"v":1,"kind":"schedules-spsa","theta":[0.5]}`),
		[]byte(`{"v":1,"kind":"schedules-spsa","theta":[2,0,0,0,0]}`),
		[]byte(`{"v":1,"kind":"schedules-spsa","told":[{"c":[99,0,0,0,0]}]}`),
	} {
		if err := s.UnmarshalBinary(bad); !errors.Is(err, evolve.ErrBadState) {
			t.Errorf("UnmarshalBinary(%q) = %v, want ErrBadState", bad, err)
		}
	}
	if err := s.UnmarshalBinary(good); err != nil {
		t.Errorf("UnmarshalBinary(fresh state) = %v", err)
	}
	if cs, err := s.Ask(2); err != nil || len(cs) != 2 {
		t.Errorf("Ask after bad state = %v, %v", cs, err)
	}
}

func TestRecords(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	s := New(bs.Space, 5, Options{})
	for range 60 {
		cs, _ := s.Ask(1)
		var res []evolve.Result
		for _, c := range cs {
			m, _ := bs.Measure(c)
			res = append(res, evolve.Result{Config: c, OK: m.OK, Value: m.Time})
		}
		_ = s.Tell(res)
	}
	recs := s.Records()
	if len(recs) < 5 {
		t.Fatalf("%d records after 60 evaluations", len(recs))
	}
	if s.Name() != "schedules-spsa" {
		t.Errorf("Name = %q", s.Name())
	}
	// Gains decrease from one update to the next until a restart resets them.
	for i := 1; i < len(recs); i++ {
		if recs[i-1].Restart {
			continue
		}
		if !(recs[i].GainA < recs[i-1].GainA && recs[i].GainC < recs[i-1].GainC) {
			t.Errorf("record %d gains %v/%v not below %v/%v", i, recs[i].GainA, recs[i].GainC, recs[i-1].GainA, recs[i-1].GainC)
		}
	}
	for _, r := range recs {
		if len(r.Theta) != bs.Space.Len() || r.Config == "" || math.IsNaN(r.Loss) {
			t.Fatalf("malformed record %+v", r)
		}
	}
}

func score(t *testing.T, bs evolve.BenchSpace, f evolve.Factory, name string, seeds int, ks []int) evolve.Score {
	t.Helper()
	var runs []evolve.BenchRun
	for seed := range uint64(seeds) {
		r, err := evolve.Run(context.Background(), bs, f, seed, evolve.RunOptions{Budget: slices.Max(ks)})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return evolve.ScoreRuns(bs.Name, name, runs, bs.Optimum, ks)
}

func TestBeatsRandom(t *testing.T) {
	t.Parallel()
	bs := evolvetest.Synthetic(t)
	ks := []int{25, 50, 100}
	sp, rnd := score(t, bs, factory, "schedules", 20, ks), score(t, bs, randomFactory, "random", 20, ks)
	for _, k := range ks {
		t.Logf("synthetic k=%d: schedules %.3f random %.3f", k, sp.At[k], rnd.At[k])
	}
	for _, k := range []int{50, 100} {
		if sp.At[k] <= rnd.At[k] {
			t.Errorf("k=%d: schedules %.3f <= random %.3f", k, sp.At[k], rnd.At[k])
		}
	}
}

func spacesDir(t testing.TB) string {
	dir := filepath.Join("..", "..", "shared", "spaces")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no recorded spaces at %s: %v", dir, err)
	}
	return dir
}

func loadSpace(t testing.TB, path string) evolve.BenchSpace {
	t.Helper()
	rec, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := rec.Space(evaluate.Problem{})
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := rec.Optimum()
	var valid []float64
	for _, c := range sp.All() {
		if tr, ok := rec.Trial(sp.Key(c)); ok && tr.OK() {
			valid = append(valid, tr.Time)
		}
	}
	return evolve.BenchSpace{
		Name: rec.Name, Space: sp, Optimum: opt, Size: rec.Len(), Valid: valid,
		Measure: func(c genome.Config) (evolve.Measurement, error) {
			tr, err := rec.Evaluate(context.Background(), c, evaluate.Problem{})
			if err != nil {
				return evolve.Measurement{}, err
			}
			return evolve.Measurement{Key: tr.Key, Status: string(tr.Status), Time: tr.Time, OK: tr.OK(), Cost: tr.Cost}, nil
		},
	}
}

// TestRealSpaces logs the metric on recorded GPU spaces; it asserts only
// that runs complete.
func TestRealSpaces(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := spacesDir(t)
	ks := []int{25, 50, 100}
	for _, name := range []string{"convolution_milo_A100", "convolution_RTX_3090", "dedispersion_milo_A4000"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bs := loadSpace(t, filepath.Join(dir, name+".json.gz"))
			sp := score(t, bs, factory, "schedules", 20, ks)
			rnd := score(t, bs, randomFactory, "random", 20, ks)
			for _, k := range ks {
				t.Logf("%s (%d configs) k=%d: schedules %.3f random %.3f (exact %.3f)", name, len(bs.Space.All()), k,
					sp.At[k], rnd.At[k], evolve.RandomExpectation(bs.Valid, bs.Size, k))
			}
		})
	}
}

// overheadSpace is a synthetic space of 17,956 configs (134²), the size of
// the largest recorded spaces this strategy should serve.
func overheadSpace(t testing.TB) evolve.BenchSpace {
	t.Helper()
	vals := func(n int) []genome.Value {
		out := make([]genome.Value, n)
		for i := range out {
			out[i] = genome.Int(int64(i))
		}
		return out
	}
	s, err := genome.NewSpace([]genome.Param{
		{Name: "a", Values: vals(134)},
		{Name: "b", Values: vals(134)},
	}, genome.SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bs := evolve.BenchSpace{Name: "big", Space: s, Size: len(s.All()), Optimum: 1}
	bs.Measure = func(c genome.Config) (evolve.Measurement, error) {
		v := 1 + math.Abs(float64(c[0]-90))/10 + math.Abs(float64(c[1]-20))/20 + math.Sin(float64(c[0]*c[1]))/4
		return evolve.Measurement{Key: s.Key(c), OK: true, Time: v, Cost: 1}, nil
	}
	return bs
}

func TestOverhead(t *testing.T) {
	t.Parallel()
	bs := overheadSpace(t)
	if len(bs.Space.All()) != 17956 {
		t.Fatalf("space has %d configs", len(bs.Space.All()))
	}
	run, err := evolve.Run(context.Background(), bs, factory, 1, evolve.RunOptions{Budget: 400, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	per := run.Overhead / time.Duration(len(run.Trace))
	t.Logf("overhead %v per evaluation over %d evaluations", per, len(run.Trace))
	if per > 25*time.Millisecond { // generous: -race and shared machines
		t.Errorf("overhead %v per evaluation", per)
	}
}

func BenchmarkOverhead(b *testing.B) {
	bs := overheadSpace(b)
	bs.Space.All()
	evals := 0
	for b.Loop() {
		run, err := evolve.Run(context.Background(), bs, factory, 1, evolve.RunOptions{Budget: 400})
		if err != nil {
			b.Fatal(err)
		}
		evals += len(run.Trace)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(evals), "µs/eval")
}

package builtin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// A chain is two kernels, the first one's output the second one's input:
// a conv2d or sgemm feeding a reduce (the sum of its outputs). Zone tunes
// the precision map of the whole chain jointly against one error budget:
// every combination of the two kernels' precision parameters, their other
// parameters held at the given configs, is bounded a priori (the
// upstream's per-output bound passes through the sum, precision.
// ThroughLinear, and adds to the reduce's own bound on the values it
// received), its error measured against the float64 reference of the
// whole chain, and timed; a map is certified when both its composed bound
// and its measured error fit the budget on every seed.

// ZoneStage is one kernel of a chain at a config: Key is a config key of
// its space at Dims whose non-precision parameters are kept ("" is the
// default). The reduce's Dims are ignored: it sums the upstream's outputs.
type ZoneStage struct {
	Kernel *Kernel
	Dims   []int
	Key    string
}

// ZoneSettings are how Zone checks and times the maps.
type ZoneSettings struct {
	Budget evaluate.ErrorBudget // rel, or abs (absolute error of the sum); required
	Inputs string               // signed (default) or positive seeded inputs
	Seeds  []uint64             // seeded inputs checked (default 1, 2, 3)
	Runs   int                  // timed runs of each stage config, the median kept (default 15)
	// Clock reads the time a stage's run takes (default: the monotonic
	// wall clock). A benchmark may pass a thread's CPU time.
	Clock func() time.Duration
}

// ZoneStageResult is one stage of a map.
type ZoneStageResult struct {
	Kernel string
	Key    string            // the stage's config key
	Map    map[string]string // its precision parameters
	// Bound is the stage's share of the composed bound, in the budget's
	// units: the upstream's error as it reaches the sum, or the reduce's
	// own error on the values it received (with the chain reference's).
	// Largest over the seeds.
	Bound float64
	// Limit is the largest error a runtime may see in this stage's output
	// on inputs like the seeded ones, in Unit, largest over the seeds: for
	// the upstream, any one output's absolute error against its float64
	// reference on the same inputs (Unit abs); for the reduce, its error
	// against the float64 sum of the values it received, in the budget's
	// kind (rel: relative to that sum's magnitude).
	Limit  float64
	Unit   string
	Parts  []evaluate.StageBound // the stage's own bound by precision stage, absolute, at the worst seed
	TimeMS float64               // median time of one run
}

// ZoneMap is one precision map of a chain, checked.
type ZoneMap struct {
	Stages   []ZoneStageResult
	Bound    float64 // composed a-priori bound, budget units, largest over the seeds
	Measured float64 // measured error against the chain's float64 reference, largest over the seeds
	TimeMS   float64 // the stages' times added (they run one after the other)
	Passed   bool    // Bound and Measured within the budget
}

// Key is the map's stage keys joined by " | ".
func (m ZoneMap) Key() string {
	ks := make([]string, len(m.Stages))
	for i, s := range m.Stages {
		ks[i] = s.Kernel + " " + s.Key
	}
	return strings.Join(ks, " | ")
}

// Zoning is every map of a chain, checked against one budget.
type Zoning struct {
	Budget evaluate.ErrorBudget
	Seeds  []uint64
	Inputs string
	N      int // the upstream's output length: the reduce's problem in the chain
	Maps   []ZoneMap
	Notes  []string // what stood in for a stage's config
	// Best is the index in Maps of the fastest certified map, -1 when
	// none fits; Default that of the stages' own configs (what runs
	// without zoning).
	Best, Default int
}

// BestWithin is the index of the fastest certified map whose stages'
// bounds are each within its share of the budget (shares[i] for stage i,
// fractions of the budget), -1 when none: what budgets set per kernel,
// rather than one for the chain, would serve.
func (z Zoning) BestWithin(shares []float64) int {
	best := -1
	for i, m := range z.Maps {
		if !m.Passed || len(shares) != len(m.Stages) {
			continue
		}
		ok := true
		for j, s := range m.Stages {
			ok = ok && s.Bound <= shares[j]*z.Budget.Value
		}
		if ok && (best < 0 || m.TimeMS < z.Maps[best].TimeMS) {
			best = i
		}
	}
	return best
}

// At is z checked against another value of its budget: the same maps,
// bounds and measurements, certified again.
func (z Zoning) At(value float64) Zoning {
	z.Budget.Value = value
	z.Maps = slices.Clone(z.Maps)
	z.Best = -1
	for i := range z.Maps {
		m := &z.Maps[i]
		m.Passed = m.Bound <= value && m.Measured <= value
		if m.Passed && (z.Best < 0 || m.TimeMS < z.Maps[z.Best].TimeMS) {
			z.Best = i
		}
	}
	return z
}

// ErrChain is a chain Zone cannot compose.
var ErrChain = errors.New("chain not supported")

// zoneVariant is one stage's config at one of its precision maps.
type zoneVariant struct {
	cfg  genome.Config
	vals map[string]genome.Value
	prec map[string]string
}

// variants lists the configs of st's space that keep st's non-precision
// parameters and take every combination of its precision parameters,
// valid ones only, and the index of st's own config among them; note says
// what stood in for a config not valid at dims.
func (st ZoneStage) variants(dims []int) (s *genome.Space, out []zoneVariant, own int, note string, err error) {
	k := st.Kernel
	if s, err = k.Space(evaluate.Problem{Dims: dims}); err != nil {
		return nil, nil, 0, "", err
	}
	base := s.Default()
	if st.Key != "" {
		if base, err = s.ParseKey(st.Key); err != nil {
			return nil, nil, 0, "", fmt.Errorf("%s: %w", k.def.name, err)
		}
	}
	var idx []int // positions of the precision parameters
	for name := range k.def.precision {
		i, _ := s.Param(name)
		idx = append(idx, i)
	}
	slices.Sort(idx)
	cfgs := []genome.Config{slices.Clone(base)}
	for _, i := range idx {
		var next []genome.Config
		for _, c := range cfgs {
			for j := range s.Params()[i].Values {
				c2 := slices.Clone(c)
				c2[i] = j
				next = append(next, c2)
			}
		}
		cfgs = next
	}
	own = -1
	for _, c := range cfgs {
		if !s.Valid(c) {
			continue
		}
		if slices.Equal(c, base) {
			own = len(out)
		}
		v := zoneVariant{cfg: c, vals: s.Map(c), prec: map[string]string{}}
		for _, i := range idx {
			p := s.Params()[i]
			v.prec[p.Name] = p.Values[c[i]].String()
		}
		out = append(out, v)
	}
	if own < 0 && st.Key != "" {
		// The config is another problem's (a reduce's served config at
		// its own n, say) and not valid here: the default's other
		// parameters stand in.
		d := ZoneStage{Kernel: k, Dims: dims}
		s, out, own, _, err := d.variants(dims)
		if err == nil {
			note = fmt.Sprintf("%s: config %s is not valid at %s; its default's other parameters are used", k.def.name, st.Key, evaluate.Problem{Dims: dims})
		}
		return s, out, own, note, err
	}
	if own < 0 {
		return nil, nil, 0, "", fmt.Errorf("%s: config %s is not valid at %v", k.def.name, s.Key(base), dims)
	}
	return s, out, own, "", nil
}

// Zone checks and times every precision map of the chain up → down (a
// reduce) and returns them with the fastest certified one.
func Zone(ctx context.Context, up, down ZoneStage, set ZoneSettings) (Zoning, error) {
	if up.Kernel == nil || down.Kernel == nil {
		return Zoning{}, fmt.Errorf("zone: %w: a stage has no kernel", ErrChain)
	}
	if down.Kernel.def.name != "reduce" || up.Kernel.def.name == "reduce" {
		return Zoning{}, fmt.Errorf("zone %s -> %s: %w (want conv2d or sgemm feeding reduce)", up.Kernel.def.name, down.Kernel.def.name, ErrChain)
	}
	switch set.Budget.Kind {
	case evaluate.ToleranceRel, evaluate.ToleranceAbs:
	default:
		return Zoning{}, fmt.Errorf("zone: error budget %q: %w (want rel or abs)", set.Budget.Kind, ErrChain)
	}
	if !(set.Budget.Value > 0) {
		return Zoning{}, fmt.Errorf("zone: error budget %v: want > 0", set.Budget.Value)
	}
	if err := up.Kernel.def.checkProblem(evaluate.Problem{Dims: up.Dims}); err != nil {
		return Zoning{}, fmt.Errorf("zone: %s: %w", up.Kernel.def.name, err)
	}
	if len(set.Seeds) == 0 {
		set.Seeds = []uint64{1, 2, 3}
	}
	if set.Runs <= 0 {
		set.Runs = 15
	}
	if set.Clock == nil {
		start := time.Now()
		set.Clock = func() time.Duration { return time.Since(start) }
	}
	upDef, downDef := up.Kernel.def, down.Kernel.def
	_, _, n := upDef.sizes(up.Dims)
	downDims := []int{n}
	upSpace, upVars, upOwn, upNote, err := up.variants(up.Dims)
	if err != nil {
		return Zoning{}, fmt.Errorf("zone: %w", err)
	}
	downSpace, downVars, downOwn, downNote, err := down.variants(downDims)
	if err != nil {
		return Zoning{}, fmt.Errorf("zone: %w", err)
	}

	z := Zoning{Budget: set.Budget, Seeds: set.Seeds, Inputs: set.Inputs, N: n, Best: -1, Default: upOwn*len(downVars) + downOwn}
	for _, n := range []string{upNote, downNote} {
		if n != "" {
			z.Notes = append(z.Notes, n)
		}
	}
	for _, uv := range upVars {
		for _, dv := range downVars {
			z.Maps = append(z.Maps, ZoneMap{Stages: []ZoneStageResult{
				{Kernel: upDef.name, Key: upSpace.Key(uv.cfg), Map: uv.prec, Unit: evaluate.ToleranceAbs},
				{Kernel: downDef.name, Key: downSpace.Key(dv.cfg), Map: dv.prec, Unit: set.Budget.Kind},
			}})
		}
	}
	units := func(x, ref float64) float64 {
		if set.Budget.Kind == evaluate.ToleranceRel {
			return x / max(math.Abs(ref), minNormal32)
		}
		return x
	}
	stopped := func() error { return ctx.Err() }

	var timeIn Inputs // seed 1's inputs, for the timings
	for si, seed := range set.Seeds {
		in := upDef.newInputs(up.Dims, seed)
		if set.Inputs == evaluate.InputsPositive {
			in = absInputs(in)
		}
		if si == 0 {
			timeIn = in
		}
		ref, abs := upDef.verify.refAbs(up.Dims, in)
		if err := stopped(); err != nil {
			return Zoning{}, err
		}
		sr := neumaier(ref)
		for ui, uv := range upVars {
			out := make([]float32, n)
			// A run that fails (an integer format refusing a NaN or Inf)
			// leaves its maps uncertified, with an infinite bound.
			upErr := protect(func() { upDef.prepare(uv.vals, up.Dims)(in, out) })
			if err := stopped(); err != nil {
				return Zoning{}, err
			}
			um := upDef.verify.bound(uv.vals, up.Dims, in)
			ups := make([]float64, n)
			sumAbsOut, upMax := 0.0, 0.0
			for j := range ups {
				if ups[j] = um.bound(ref[j], abs[j]); math.IsNaN(ups[j]) {
					ups[j] = math.Inf(1)
				}
				sumAbsOut += math.Abs(float64(out[j]))
				upMax = max(upMax, ups[j])
			}
			through, err := precision.ThroughLinear(nil, ups, 0)
			if err != nil {
				return Zoning{}, fmt.Errorf("zone: %w", err)
			}
			mid := Inputs{A: out, cache: new(storeCache)}
			for di, dv := range downVars {
				zm := &z.Maps[ui*len(downVars)+di]
				got := make([]float32, 1)
				runErr := upErr
				if runErr == nil {
					runErr = protect(func() { downDef.prepare(dv.vals, downDims)(mid, got) })
				}
				if runErr != nil {
					zm.Bound, zm.Measured = math.Inf(1), math.Inf(1)
					for k := range zm.Stages {
						zm.Stages[k].Bound, zm.Stages[k].Limit = math.Inf(1), math.Inf(1)
					}
					continue
				}
				dm := downDef.verify.bound(dv.vals, downDims, mid)
				// The reduce's own bound on the values it received, at
				// magnitudes that cover the exact chain's: |Σx̃| <=
				// |s| + Σup, Σ|x̃| as seen.
				c := through
				var parts []evaluate.StageBound
				if dm.stages != nil {
					parts = dm.stages(math.Abs(sr)+c.Upstream, sumAbsOut)
				} else {
					parts = []evaluate.StageBound{{Stage: precision.StageAccumulation.String(), Value: "fp32", Bound: dm.bound(math.Abs(sr)+c.Upstream, sumAbsOut), How: dm.formula}}
				}
				c.Own = sumStages(parts)
				b := units(c.Total(), sr)
				e := units(math.Abs(float64(got[0])-sr), sr)
				if math.IsNaN(e) {
					e = math.Inf(1)
				}
				if math.IsNaN(b) {
					b = math.Inf(1)
				}
				if math.IsInf(zm.Bound, 1) && math.IsInf(zm.Measured, 1) && si > 0 {
					continue // failed on an earlier seed
				}
				if si == 0 || b > zm.Bound {
					zm.Bound = b
					zm.Stages[1].Parts = parts
					zm.Stages[0].Parts = upParts(um, ref, abs)
				}
				// Each stage's share and limit are checked on their own
				// (a runtime's report is one stage's): each is the largest
				// over the seeds, not the one at the worst total's seed.
				zm.Stages[0].Bound = max(zm.Stages[0].Bound, units(c.Upstream, sr))
				zm.Stages[1].Bound = max(zm.Stages[1].Bound, units(c.Own, sr))
				zm.Stages[0].Limit = max(zm.Stages[0].Limit, upMax)
				zm.Stages[1].Limit = max(zm.Stages[1].Limit, ownLimit(set.Budget.Kind, c, sr))
				zm.Measured = max(zm.Measured, e)
			}
		}
	}

	// Times: each upstream variant on seed 1's inputs, each reduce
	// variant on the fp32 upstream's output (a sum's time does not depend
	// on the values).
	// A config whose run fails takes forever: its maps are not certified.
	timeOf := func(run runner, in Inputs, out []float32) float64 {
		if protect(func() { run(in, out) }) != nil { // stores the input in its format, once
			return math.Inf(1)
		}
		ts := make([]float64, set.Runs)
		for i := range ts {
			t0 := set.Clock()
			run(in, out)
			ts[i] = float64(set.Clock()-t0) / float64(time.Millisecond)
		}
		return evaluate.Median(ts)
	}
	out := make([]float32, n)
	upMS := make([]float64, len(upVars))
	for i, uv := range upVars {
		if err := stopped(); err != nil {
			return Zoning{}, err
		}
		upMS[i] = timeOf(upDef.prepare(uv.vals, up.Dims), timeIn, out)
	}
	// The reduce variants are timed on the fp32 upstream's output (the
	// stage's own config where no variant is all fp32).
	fp32 := upOwn
	for i := len(upVars) - 1; i >= 0; i-- {
		all := true
		for _, f := range upVars[i].prec {
			all = all && f == precision.FP32.String()
		}
		if all {
			fp32 = i
		}
	}
	downMS := make([]float64, len(downVars))
	if err := protect(func() { upDef.prepare(upVars[fp32].vals, up.Dims)(timeIn, out) }); err != nil {
		// Nothing to time the reduce on: no map is certified, as when
		// a map's own run fails.
		z.Notes = append(z.Notes, fmt.Sprintf("%s %s failed on the timing inputs (%v): no map is certified", upDef.name, upSpace.Key(upVars[fp32].cfg), err))
		for i := range z.Maps {
			zm := &z.Maps[i]
			zm.Bound, zm.Measured = math.Inf(1), math.Inf(1)
		}
		for i := range downMS {
			downMS[i] = math.Inf(1)
		}
	} else {
		mid := Inputs{A: out, cache: new(storeCache)}
		got := make([]float32, 1)
		for i, dv := range downVars {
			if err := stopped(); err != nil {
				return Zoning{}, err
			}
			downMS[i] = timeOf(downDef.prepare(dv.vals, downDims), mid, got)
		}
	}
	for ui := range upVars {
		for di := range downVars {
			zm := &z.Maps[ui*len(downVars)+di]
			zm.Stages[0].TimeMS, zm.Stages[1].TimeMS = upMS[ui], downMS[di]
			zm.TimeMS = upMS[ui] + downMS[di]
		}
	}
	return z.At(set.Budget.Value), nil
}

// ownLimit is the reduce's own bound c.Own in kind's unit against the
// float64 sum of the values it received: relative to that sum, whose
// magnitude is at least |s| - the upstream's error, s the chain's exact
// sum (infinite when that may be 0).
func ownLimit(kind string, c precision.Composed, s float64) float64 {
	if kind != evaluate.ToleranceRel {
		return c.Own
	}
	if low := math.Abs(s) - c.Upstream; low > 0 {
		return c.Own / low
	}
	return math.Inf(1)
}

// upParts is the upstream's bound by precision stage at its worst output.
func upParts(m errorModel, ref, abs []float64) []evaluate.StageBound {
	w, wb := 0, -1.0
	for j := range ref {
		if b := m.bound(ref[j], abs[j]); b > wb {
			w, wb = j, b
		}
	}
	if m.stages != nil {
		return m.stages(ref[w], abs[w])
	}
	return []evaluate.StageBound{{Stage: precision.StageAccumulation.String(), Value: "fp32", Bound: wb, How: m.formula}}
}

// neumaier is Σxs in float64 with Neumaier's compensation, as
// refAbsReduce sums (its error is far below every bound here).
func neumaier(xs []float64) float64 {
	var s, c float64
	for _, v := range xs {
		s, c = neumaierAdd(s, c, v)
	}
	return s + c
}

package evolve

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/quasim/quasim/genome"
)

// ForestOptions tunes the forest search. Zero values take the defaults.
type ForestOptions struct {
	Init     int     // random configs measured before the model proposes (default 10)
	Trees    int     // trees in the forest (default 16)
	MinLeaf  int     // fewest results in a leaf (default 2)
	Features float64 // share of the parameters tried at each split (default 5/6, as SMAC)
	Random   int     // random candidates scored per proposal (default 300)
	Starts   int     // local searches on the acquisition per proposal (default 6)
	Refit    float64 // past 400 results, refit when the history grew by this share (default 0.1)
	// Prior is how strongly a warm start's ranking weights the
	// acquisition: expected improvement times exp(-Prior*q/n) at rank
	// quantile q after n results, πBO's π(x)^(β/n) with π = exp(-q/τ) and
	// Prior = β/τ (default 100: chosen by leave-one-kernel-out on the
	// recorded spaces over 3, 10, 30 and 100; the weight past a head of a
	// tenth is then e^-10 after 10 results, e^-1 after 100). Negative
	// turns the weighting off (the option prior=0).
	Prior float64
	// PriorDraw is the share of the random candidates a warm-started
	// forest draws from the head of its prior (default 0.5; 0.25 and 0.75
	// scored the same). Negative draws none (the option priordraw=0).
	PriorDraw float64
	// Targets is what the model is fitted to: TargetsLog (default), the
	// log values, or TargetsRank, their normal scores (targets.go), which
	// scored below the log for the forest on both vendors' recordings.
	Targets string

	shuffle bool // tests: fit the model to the targets in random order, so it knows nothing
}

func (o *ForestOptions) defaults() {
	if o.Init <= 0 {
		o.Init = 10
	}
	if o.Trees <= 0 {
		o.Trees = 16
	}
	if o.MinLeaf <= 0 {
		o.MinLeaf = 2
	}
	if o.Features <= 0 || o.Features > 1 {
		o.Features = 5.0 / 6
	}
	if o.Random <= 0 {
		o.Random = 300
	}
	if o.Starts <= 0 {
		o.Starts = 6
	}
	if o.Refit <= 0 {
		o.Refit = 0.1
	}
	switch {
	case o.Prior == 0:
		o.Prior = 100
	case o.Prior < 0:
		o.Prior = 0
	}
	switch {
	case o.PriorDraw == 0 || o.PriorDraw > 1:
		o.PriorDraw = 0.5
	case o.PriorDraw < 0:
		o.PriorDraw = 0
	}
}

// Forest is sequential model-based search with a random forest, as SMAC
// does it: the forest is fitted to the log times of every result (a failed
// config at the worst log time plus one), and the next config is the one
// of highest expected improvement among random candidates and the ends of
// local searches that start at the best of those candidates and move one
// parameter at a time. Trees suit these spaces: they cut a parameter where its effect
// changes, carry interactions down their branches, ignore parameters that
// do not matter, and their disagreement says where the model is unsure.
//
// The model is refitted at every Ask up to 400 results, then each time the
// history has grown by Refit, so the cost per evaluation stays flat. Each
// fit draws from its own stream, seeded by the seed and the history's
// length, so a resumed run refits the same model.
type Forest struct {
	space  *genome.Space
	opt    ForestOptions
	pcg    *rand.PCG
	rng    *rand.Rand
	st     forestState
	model  *forest
	levels []int
}

type forestState struct {
	stateHeader
	Seed  uint64     `json:"seed"`
	FitAt int        `json:"fit_at"`          // results the model was fitted to; 0 for none
	Prior *PriorHead `json:"prior,omitempty"` // a warm start's, or nil
}

// NewForest returns forest search over space, seeded by seed.
func NewForest(space *genome.Space, seed uint64, opt ForestOptions) *Forest {
	if space == nil {
		panic("evolve: nil space")
	}
	opt.defaults()
	pcg := rand.NewPCG(seed, seed^0x5851f42d4c957f2d)
	f := &Forest{space: space, opt: opt, pcg: pcg, rng: rand.New(pcg)}
	f.st.Seed = seed
	f.st.H.Init()
	for _, p := range space.Params() {
		f.levels = append(f.levels, len(p.Values))
	}
	return f
}

// Name implements Strategy.
func (f *Forest) Name() string { return "forest" }

// Ask implements Strategy.
func (f *Forest) Ask(n int) ([]genome.Config, error) {
	var out []genome.Config
	for range n {
		var c genome.Config
		if f.okCount() >= f.opt.Init {
			f.refit()
			c = f.propose()
		}
		if c == nil {
			// πBO's initial design: a warm start's configs come from the
			// prior's head, not the whole space.
			c = f.st.Prior.Sample(f.rng, f.space, f.st.H.Known)
		}
		if c == nil {
			c = sampleUnknown(f.rng, f.space, &f.st.H)
		}
		if c == nil {
			break
		}
		f.st.H.Ask(c)
		out = append(out, c)
	}
	return out, nil
}

func (f *Forest) okCount() int {
	n := 0
	for _, r := range f.st.H.Told {
		if r.OK {
			n++
		}
	}
	return n
}

// refit fits the model when it is due: at every new result up to 400, then
// when the history has grown by Refit.
func (f *Forest) refit() {
	n := len(f.st.H.Told)
	if f.model != nil && n == f.st.FitAt {
		return
	}
	if f.model != nil && n > 400 && float64(n) < float64(f.st.FitAt)*(1+f.opt.Refit) {
		return
	}
	f.fit(n)
}

// fit fits the model to the first n results, from a stream of its own.
func (f *Forest) fit(n int) {
	told := f.st.H.Told[:n]
	x := make([][]int, n)
	y := LogTargets(told)
	for i, r := range told {
		x[i] = r.Config
	}
	rng := rand.New(rand.NewPCG(f.st.Seed, uint64(n)^0x2545f4914f6cdd1d))
	if f.opt.shuffle {
		rng.Shuffle(len(y), func(i, j int) { y[i], y[j] = y[j], y[i] })
	}
	f.model = fitForest(rng, x, y, f.levels, forestOptions{trees: f.opt.Trees, minLeaf: f.opt.MinLeaf, features: f.opt.Features})
	f.st.FitAt = n
}

// LogTargets returns what model-based strategies fit: the log of each
// result's value, a failed one at the worst valid log value plus one (so
// failures read as clearly worse than anything that ran, not infinitely).
// Values that are not all positive are shifted to start at 1 first.
func LogTargets(told []Result) []float64 {
	shift := 0.0
	for _, r := range told {
		if r.OK && r.Value <= 0 {
			shift = math.Min(shift, r.Value-1)
		}
	}
	y := make([]float64, len(told))
	worst := math.Inf(-1)
	for i, r := range told {
		if r.OK {
			y[i] = math.Log(r.Value - shift)
			worst = max(worst, y[i])
		}
	}
	if math.IsInf(worst, -1) {
		worst = 0
	}
	for i, r := range told {
		if !r.OK {
			y[i] = worst + 1
		}
	}
	return y
}

// rejectionDraws is how many random candidates a proposal draws on a
// space that is sampled by rejection.
const rejectionDraws = 10

// propose returns the unknown config of highest expected improvement it
// finds, or nil.
func (f *Forest) propose() genome.Config {
	best := math.Inf(1)
	for _, y := range FitTargets(f.st.H.Told[:f.st.FitAt], f.opt.Targets) {
		best = min(best, y)
	}
	var (
		arg   genome.Config
		argEI = math.Inf(-1)
	)
	score := func(c genome.Config) float64 {
		m, v := f.model.predict(c)
		ei := expectedImprovement(best, m, math.Sqrt(v)) * f.priorWeight(c)
		if ei > argEI && !f.st.H.Known(c) {
			arg, argEI = c, ei
		}
		return ei
	}
	type cand struct {
		c  genome.Config
		ei float64
	}
	var starts []cand
	if f.space.Enumerable() && (f.st.H.Seen() >= f.space.Size()/2 || f.space.Size() <= 2*f.opt.Random) {
		// Past half the space SampleUnseen rebuilds the list of what is
		// left at every draw: score that list once instead.
		for _, c := range f.space.All() {
			if !f.st.H.Known(c) {
				starts = append(starts, cand{c, score(c)})
			}
		}
	} else {
		draws := f.opt.Random
		if _, counted := f.space.Count(); !f.space.Enumerable() && !counted {
			// Each draw is a rejection sampler's, which can cost a
			// millisecond: draw a few and let the local searches,
			// which only check constraints, do the rest.
			draws = min(draws, rejectionDraws)
		}
		if f.st.Prior != nil {
			// The weight makes the head's configs the likely picks, so
			// part of the candidates come from there: uniform draws
			// rarely land in a head of a tenth of the space.
			// Drawn without replacement; what the head cannot give, the
			// whole space does.
			head := f.st.Prior.Unknown(f.space, f.st.H.Known)
			n := min(int(f.opt.PriorDraw*float64(draws)), len(head))
			for i := range n {
				j := i + f.rng.IntN(len(head)-i)
				head[i], head[j] = head[j], head[i]
				starts = append(starts, cand{head[i], score(head[i])})
			}
			draws -= n
		}
		for range draws {
			c := sampleUnknown(f.rng, f.space, &f.st.H)
			if c == nil {
				break
			}
			starts = append(starts, cand{c, score(c)})
		}
	}
	// Local searches start at the random candidates of highest expected
	// improvement. Starting half of them at the best results instead, as
	// SMAC does, made forest alone slightly better and the portfolio
	// worse (0.940 against 0.954 at k=100, docs/evidence/search-quality.md): es and schedules
	// already search around the best results.
	slices.SortStableFunc(starts, func(a, b cand) int { return cmpFloat(b.ei, a.ei) })
	for _, s := range starts[:min(f.opt.Starts, len(starts))] {
		f.climb(s.c, score)
	}
	if arg == nil {
		return nil
	}
	return arg.Clone()
}

// priorWeight is πBO's weight of c's expected improvement: exp(-Prior*q/n)
// for rank quantile q in the warm start's prior and n results fitted, so
// the prior decides early and the model, as results accumulate, later.
// It is 1 without a prior.
func (f *Forest) priorWeight(c genome.Config) float64 {
	if f.st.Prior == nil {
		return 1
	}
	return math.Exp(-f.opt.Prior * f.st.Prior.Quantile(c) / float64(max(f.st.FitAt, 1)))
}

// WarmStart implements WarmStarter: the head of prior (the share a
// portfolio's transfer member follows) weights the acquisition and
// supplies candidates and the configs drawn before the model, by πBO.
// Call it before the first Ask, at most once.
func (f *Forest) WarmStart(prior []genome.Config) {
	if f.st.Prior == nil {
		f.st.Prior = NewPriorHead(f.space, prior)
	}
}

// climb moves from c one parameter at a time to the neighbour of highest
// expected improvement while that improves it. Neighbours move a parameter
// one or two values either way, or to a random value.
func (f *Forest) climb(c genome.Config, score func(genome.Config) float64) {
	cur, curEI := c.Clone(), score(c)
	for range 16 {
		var next genome.Config
		nextEI := curEI
		for p, l := range f.levels {
			if l < 2 {
				continue
			}
			for _, j := range [5]int{cur[p] - 2, cur[p] - 1, cur[p] + 1, cur[p] + 2, f.rng.IntN(l)} {
				if j < 0 || j >= l || j == cur[p] {
					continue
				}
				nb := cur.Clone()
				nb[p] = j
				if !f.space.Valid(nb) {
					continue
				}
				if ei := score(nb); ei > nextEI {
					next, nextEI = nb, ei
				}
			}
		}
		if next == nil {
			return
		}
		cur, curEI = next, nextEI
	}
}

// Withdraw implements Withdrawer.
func (f *Forest) Withdraw(c genome.Config) { f.st.H.Withdraw(c) }

// Tell implements Strategy.
func (f *Forest) Tell(results []Result) error {
	for _, r := range results {
		if err := checkResult(f.space, r); err != nil {
			return err
		}
	}
	for _, r := range results {
		f.st.H.Tell(r)
	}
	return nil
}

// MarshalBinary implements Strategy.
func (f *Forest) MarshalBinary() ([]byte, error) {
	rng, err := f.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := f.st
	st.V, st.Kind, st.RNG = 1, f.Name(), rng
	return json.Marshal(st)
}

// UnmarshalBinary implements Strategy. On error the strategy is unchanged.
func (f *Forest) UnmarshalBinary(data []byte) error {
	var st forestState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	if st.FitAt < 0 || st.FitAt > len(st.H.Told) {
		return fmt.Errorf("%w: model fitted to %d of %d results", ErrBadState, st.FitAt, len(st.H.Told))
	}
	if st.Prior != nil {
		if err := st.Prior.Check(f.space); err != nil {
			return err
		}
		st.Prior.Init()
	}
	pcg := *f.pcg
	if err := st.restore(f.Name(), f.space, &pcg); err != nil {
		return err
	}
	*f.pcg = pcg
	f.st, f.model = st, nil
	if st.FitAt > 0 {
		f.fit(st.FitAt)
	}
	return nil
}

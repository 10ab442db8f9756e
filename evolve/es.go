package evolve

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/quasim/quasim/genome"
)

// ESOptions tunes the evolution strategy. Zero values take the defaults.
type ESOptions struct {
	Init      int     // random configs measured before evolving (default: 2 per parameter, 8..24)
	Mu        int     // parents kept (default 6)
	Sigma     float64 // initial mutation strength, as a fraction of a value list (default 0.2)
	Tau       float64 // learning rate of the log-normal sigma update (default 0.5)
	MinSigma  float64 // lower bound on sigma (default 0.02)
	MaxSigma  float64 // upper bound on sigma (default 0.6)
	Crossover float64 // probability a child mixes two parents (default 0.3)
	Restart   int     // evaluations without improvement before a restart (default 80)
}

func (o *ESOptions) defaults(s *genome.Space) {
	mutable := 0
	for _, p := range s.Params() {
		if len(p.Values) > 1 {
			mutable++
		}
	}
	if o.Init <= 0 {
		o.Init = min(max(2*mutable, 8), 24)
	}
	if o.Mu <= 0 {
		o.Mu = 6
	}
	if o.Sigma <= 0 {
		o.Sigma = 0.2
	}
	if o.Tau <= 0 {
		o.Tau = 0.5
	}
	if o.MinSigma <= 0 {
		o.MinSigma = 0.02
	}
	if o.MaxSigma <= 0 {
		o.MaxSigma = 0.6
	}
	if o.Crossover < 0 || o.Crossover > 1 {
		o.Crossover = 0
	} else if o.Crossover == 0 {
		o.Crossover = 0.3
	}
	if o.Restart <= 0 {
		o.Restart = 80
	}
}

// ES is a (mu+lambda) evolution strategy for discrete constrained spaces. It
// works on value indices, so ordered values that sit close are close for it.
// Each individual carries its own mutation strength, adapted log-normally
// (self-adaptation): strengths that produce good children survive with them.
// Parents are the mu best configs measured since the last restart (elitism);
// after Restart evaluations without improvement it starts afresh from new
// random samples. Children are repaired to valid, unmeasured configs, so it
// never measures a config twice.
type ES struct {
	space *genome.Space
	opt   ESOptions
	pcg   *rand.PCG
	rng   *rand.Rand
	st    esState
}

type member struct {
	Config genome.Config `json:"c"`
	Value  float64       `json:"v"`
	Sigma  float64       `json:"s"`
}

type esState struct {
	stateHeader
	Pop     []member           `json:"pop"`
	Sigmas  map[string]float64 `json:"sigmas,omitempty"` // pending child -> its sigma, keyed by key
	Epoch   int                `json:"epoch"`            // results told since the last restart
	Best    float64            `json:"-"`                // best value since the last restart
	BestJ   *float64           `json:"best,omitempty"`   // Best, absent while infinite: JSON has no infinity
	Stale   int                `json:"stale"`            // results since that best improved
	Restart int                `json:"restarts"`
	Prior   *PriorHead         `json:"prior,omitempty"` // a warm start's, or nil
}

// NewES returns an evolution strategy over space, seeded by seed.
func NewES(space *genome.Space, seed uint64, opt ESOptions) *ES {
	if space == nil {
		panic("evolve: nil space")
	}
	opt.defaults(space)
	pcg := rand.NewPCG(seed, seed^0x2545f4914f6cdd1d)
	e := &ES{space: space, opt: opt, pcg: pcg, rng: rand.New(pcg)}
	e.st.Best = math.Inf(1)
	e.st.Sigmas = map[string]float64{}
	e.st.H.Init()
	return e
}

// Name implements Strategy.
func (e *ES) Name() string { return "es" }

// Ask implements Strategy.
func (e *ES) Ask(n int) ([]genome.Config, error) {
	var out []genome.Config
	for range n {
		var c genome.Config
		sigma := e.opt.Sigma
		if e.st.Epoch+len(e.st.H.Pending) >= e.opt.Init && len(e.st.Pop) > 0 {
			c, sigma = e.child()
		}
		if c == nil && e.st.Restart == 0 {
			// A warm start's first population comes from the prior's
			// head; after a restart that region is spent.
			c = e.st.Prior.Sample(e.rng, e.space, e.st.H.Known)
		}
		if c == nil {
			c = sampleUnknown(e.rng, e.space, &e.st.H)
		}
		if c == nil {
			break
		}
		e.st.H.Ask(c)
		e.st.Sigmas[e.space.Key(c)] = sigma
		out = append(out, c)
	}
	return out, nil
}

// Withdraw implements Withdrawer.
func (e *ES) Withdraw(c genome.Config) {
	if e.st.H.Withdraw(c) {
		delete(e.st.Sigmas, e.space.Key(c))
	}
}

// WarmStart implements WarmStarter: the random configs of the first
// population come from the head of prior. Call it before the first Ask, at
// most once.
func (e *ES) WarmStart(prior []genome.Config) {
	if e.st.Prior == nil {
		e.st.Prior = NewPriorHead(e.space, prior)
	}
}

// child breeds one valid unmeasured config from the parents, or nil when
// repeated tries find none near them.
func (e *ES) child() (genome.Config, float64) {
	const tries = 64
	for t := range tries {
		p := e.tournament()
		sigma := p.Sigma * math.Exp(e.opt.Tau*e.rng.NormFloat64())
		// Each failed try widens the search: the parents' surroundings may
		// be measured out.
		sigma *= 1 + float64(t)/8
		sigma = min(max(sigma, e.opt.MinSigma), e.opt.MaxSigma)
		c := p.Config.Clone()
		if len(e.st.Pop) > 1 && e.rng.Float64() < e.opt.Crossover {
			q := e.tournament()
			for i := range c {
				if e.rng.IntN(2) == 0 {
					c[i] = q.Config[i]
				}
			}
		}
		e.mutate(c, sigma)
		if e.space.Valid(c) && !e.st.H.Known(c) {
			return c, sigma
		}
	}
	return nil, 0
}

// mutate moves about one parameter on average, and always at least one.
func (e *ES) mutate(c genome.Config, sigma float64) {
	params := e.space.Params()
	var mutable []int
	for i, p := range params {
		if len(p.Values) > 1 {
			mutable = append(mutable, i)
		}
	}
	if len(mutable) == 0 {
		return
	}
	rate := 1 / float64(len(mutable))
	forced := mutable[e.rng.IntN(len(mutable))]
	for _, i := range mutable {
		if i == forced || e.rng.Float64() < rate {
			c[i] = genome.StepIndex(e.rng, c[i], len(params[i].Values), sigma)
		}
	}
}

// tournament picks the better of two random parents.
func (e *ES) tournament() member {
	a := e.st.Pop[e.rng.IntN(len(e.st.Pop))]
	b := e.st.Pop[e.rng.IntN(len(e.st.Pop))]
	if b.Value < a.Value {
		return b
	}
	return a
}

// Tell implements Strategy.
func (e *ES) Tell(results []Result) error {
	for _, r := range results {
		if err := checkResult(e.space, r); err != nil {
			return err
		}
	}
	for _, r := range results {
		if !e.st.H.Tell(r) {
			continue
		}
		key := e.space.Key(r.Config)
		sigma, ok := e.st.Sigmas[key]
		if !ok {
			sigma = e.opt.Sigma
		}
		delete(e.st.Sigmas, key)
		e.st.Epoch++
		e.st.Stale++
		if !r.OK {
			continue
		}
		if r.Value < e.st.Best {
			e.st.Best, e.st.Stale = r.Value, 0
		}
		e.st.Pop = append(e.st.Pop, member{Config: r.Config.Clone(), Value: r.Value, Sigma: sigma})
		slices.SortStableFunc(e.st.Pop, func(a, b member) int { return cmpFloat(a.Value, b.Value) })
		if len(e.st.Pop) > e.opt.Mu {
			e.st.Pop = e.st.Pop[:e.opt.Mu]
		}
	}
	if e.st.Stale >= e.opt.Restart {
		e.st.Pop = nil
		e.st.Epoch = 0
		e.st.Best = math.Inf(1)
		e.st.Stale = 0
		e.st.Restart++
	}
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// MarshalBinary implements Strategy.
func (e *ES) MarshalBinary() ([]byte, error) {
	rng, err := e.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := e.st
	st.V, st.Kind, st.RNG = 1, e.Name(), rng
	if !math.IsInf(st.Best, 1) {
		st.BestJ = &st.Best
	}
	return json.Marshal(st)
}

// UnmarshalBinary implements Strategy. On error the strategy is unchanged.
func (e *ES) UnmarshalBinary(data []byte) error {
	var st esState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	for i, m := range st.Pop {
		if !e.space.InRange(m.Config) {
			return fmt.Errorf("%w: pop[%d] not in space", ErrBadState, i)
		}
	}
	if st.Prior != nil {
		if err := st.Prior.Check(e.space); err != nil {
			return err
		}
		st.Prior.Init()
	}
	pcg := *e.pcg
	if err := st.restore(e.Name(), e.space, &pcg); err != nil {
		return err
	}
	*e.pcg = pcg
	st.Best = math.Inf(1)
	if st.BestJ != nil {
		st.Best, st.BestJ = *st.BestJ, nil
	}
	if st.Sigmas == nil {
		st.Sigmas = map[string]float64{}
	}
	e.st = st
	return nil
}

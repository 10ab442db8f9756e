package evolve

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/quasim/quasim/genome"
)

// LocalName is the name of the neighbourhood sweep as a portfolio member.
const LocalName = "local"

// LocalOptions tunes the neighbourhood sweep.
type LocalOptions struct {
	// Incumbent sweeps only the best result's neighbourhood: once that is
	// known the sweep proposes nothing until a new best is told, so as a
	// portfolio member it rests instead of taking evaluations from the
	// others far from the best.
	Incumbent bool
}

// Local is a best-first sweep of one-step neighbourhoods: it proposes an
// unknown valid config one parameter away from the best config measured,
// and only when all of those are known, from the next best, and so on. A
// new best moves the sweep to its neighbourhood at once. It is the
// exploitation the other members leave undone: they sample near the best
// at random and may never try the one move left, while this confirms a
// local optimum in at most two evaluations a parameter.
type Local struct {
	space *genome.Space
	opt   LocalOptions
	pcg   *rand.PCG
	rng   *rand.Rand
	st    localState
}

type localState struct {
	stateHeader
}

// NewLocal returns a neighbourhood sweep over space, seeded by seed.
func NewLocal(space *genome.Space, seed uint64, opt LocalOptions) *Local {
	if space == nil {
		panic("evolve: nil space")
	}
	pcg := rand.NewPCG(seed, seed^0x94d049bb133111eb)
	l := &Local{space: space, opt: opt, pcg: pcg, rng: rand.New(pcg)}
	l.st.H.Init()
	return l
}

// Name implements Strategy.
func (l *Local) Name() string { return LocalName }

// Ask implements Strategy. Before anything ran it samples at random.
func (l *Local) Ask(n int) ([]genome.Config, error) {
	var out []genome.Config
	for range n {
		c := l.next()
		if c == nil && (!l.opt.Incumbent || !l.anyOK()) {
			c = sampleUnknown(l.rng, l.space, &l.st.H)
		}
		if c == nil {
			break
		}
		l.st.H.Ask(c)
		out = append(out, c)
	}
	return out, nil
}

// next returns a random unknown neighbour of the best result that has
// one, or nil. A random order, as Kernel Tuner's greedy ILS takes: ordering
// the moves by a main-effects model fitted to the results scored lower in
// the portfolio (docs/evidence/search-quality.md).
func (l *Local) next() genome.Config {
	told := l.st.H.Told
	order := make([]int, 0, len(told))
	for i, r := range told {
		if r.OK {
			order = append(order, i)
		}
	}
	// Ties keep the order of measurement, so a run is reproducible.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(told[a].Value, told[b].Value) })
	for _, i := range order {
		if nb := l.neighbours(told[i].Config); len(nb) > 0 {
			return nb[l.rng.IntN(len(nb))]
		}
		if l.opt.Incumbent {
			return nil
		}
	}
	return nil
}

func (l *Local) anyOK() bool {
	return slices.ContainsFunc(l.st.H.Told, func(r Result) bool { return r.OK })
}

// neighbours lists c's valid neighbours (genome.Space.Neighbours: one
// parameter moved to an adjacent value) not yet asked or told.
func (l *Local) neighbours(c genome.Config) []genome.Config {
	var out []genome.Config
	for _, n := range l.space.Neighbours(c) {
		if !l.st.H.Known(n) {
			out = append(out, n)
		}
	}
	return out
}

// Withdraw implements Withdrawer.
func (l *Local) Withdraw(c genome.Config) { l.st.H.Withdraw(c) }

// Tell implements Strategy.
func (l *Local) Tell(results []Result) error {
	for _, r := range results {
		if err := checkResult(l.space, r); err != nil {
			return err
		}
	}
	for _, r := range results {
		l.st.H.Tell(r)
	}
	return nil
}

// MarshalBinary implements Strategy.
func (l *Local) MarshalBinary() ([]byte, error) {
	rng, err := l.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := l.st
	st.V, st.Kind, st.RNG = 1, l.Name(), rng
	return json.Marshal(st)
}

// UnmarshalBinary implements Strategy. On error the strategy is unchanged.
func (l *Local) UnmarshalBinary(data []byte) error {
	var st localState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	pcg := *l.pcg
	if err := st.restore(l.Name(), l.space, &pcg); err != nil {
		return err
	}
	*l.pcg = pcg
	l.st = st
	return nil
}

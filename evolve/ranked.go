package evolve

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/quasim/quasim/genome"
)

// TransferName is the name of the Ranked strategy a warm-started portfolio
// adds to its members.
const TransferName = "transfer"

// Ranked proposes the configs of a prior ranking in order, skipping those
// already known: rank transfer as a strategy, so a portfolio's bandit can
// keep or drop it as it pays off. Past the end of the ranking it proposes
// nothing.
type Ranked struct {
	space *genome.Space
	pcg   *rand.PCG
	st    rankedState
}

type rankedState struct {
	stateHeader
	Prior []genome.Config `json:"prior"`
	Next  int             `json:"next"`
}

// NewRanked returns a Ranked strategy over prior.
func NewRanked(space *genome.Space, prior []genome.Config) *Ranked {
	if space == nil {
		panic("evolve: nil space")
	}
	r := &Ranked{space: space, pcg: rand.NewPCG(0, 0)}
	for _, c := range prior {
		if space.InRange(c) {
			r.st.Prior = append(r.st.Prior, c.Clone())
		}
	}
	r.st.H.init()
	return r
}

// Name implements Strategy.
func (r *Ranked) Name() string { return TransferName }

// Ask implements Strategy.
func (r *Ranked) Ask(n int) ([]genome.Config, error) {
	var out []genome.Config
	for len(out) < n && r.st.Next < len(r.st.Prior) {
		c := r.st.Prior[r.st.Next]
		r.st.Next++
		if !r.st.H.known(c) {
			r.st.H.ask(c)
			out = append(out, c.Clone())
		}
	}
	return out, nil
}

// Tell implements Strategy.
func (r *Ranked) Tell(results []Result) error {
	for _, res := range results {
		if err := checkResult(r.space, res); err != nil {
			return err
		}
	}
	for _, res := range results {
		r.st.H.tell(res)
	}
	return nil
}

// MarshalBinary implements Strategy. The state holds the ranking itself.
func (r *Ranked) MarshalBinary() ([]byte, error) {
	st := r.st
	st.V, st.Kind, st.RNG = 1, r.Name(), nil
	rng, err := r.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st.RNG = rng
	return json.Marshal(st)
}

// UnmarshalBinary implements Strategy. On error the strategy is unchanged.
func (r *Ranked) UnmarshalBinary(data []byte) error {
	var st rankedState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	for i, c := range st.Prior {
		if !r.space.InRange(c) {
			return fmt.Errorf("%w: prior[%d] not in space", ErrBadState, i)
		}
	}
	if st.Next < 0 || st.Next > len(st.Prior) {
		return fmt.Errorf("%w: next %d of %d", ErrBadState, st.Next, len(st.Prior))
	}
	pcg := *r.pcg
	if err := st.restore(r.Name(), r.space, &pcg); err != nil {
		return err
	}
	*r.pcg = pcg
	r.st = st
	return nil
}

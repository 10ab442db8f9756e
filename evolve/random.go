package evolve

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/quasim/quasim/genome"
)

// Random samples valid configs uniformly without replacement. It is the floor
// every other strategy must clear.
type Random struct {
	space *genome.Space
	pcg   *rand.PCG
	rng   *rand.Rand
	h     History
}

// NewRandom returns random search over space, seeded by seed.
func NewRandom(space *genome.Space, seed uint64) *Random {
	if space == nil {
		panic("evolve: nil space")
	}
	pcg := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	r := &Random{space: space, pcg: pcg, rng: rand.New(pcg)}
	r.h.Init()
	return r
}

// Name implements Strategy.
func (r *Random) Name() string { return "random" }

// Ask implements Strategy.
func (r *Random) Ask(n int) ([]genome.Config, error) {
	var out []genome.Config
	for range n {
		c := sampleUnknown(r.rng, r.space, &r.h)
		if c == nil {
			break
		}
		r.h.Ask(c)
		out = append(out, c)
	}
	return out, nil
}

// Tell implements Strategy.
func (r *Random) Tell(results []Result) error {
	for _, res := range results {
		if err := checkResult(r.space, res); err != nil {
			return err
		}
		r.h.Tell(res)
	}
	return nil
}

// MarshalBinary implements Strategy.
func (r *Random) MarshalBinary() ([]byte, error) {
	rng, err := r.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return json.Marshal(stateHeader{V: 1, Kind: r.Name(), RNG: rng, H: r.h})
}

// UnmarshalBinary implements Strategy. On error the strategy is unchanged.
func (r *Random) UnmarshalBinary(data []byte) error {
	var st stateHeader
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	pcg := *r.pcg
	if err := st.restore(r.Name(), r.space, &pcg); err != nil {
		return err
	}
	*r.pcg = pcg
	r.h = st.H
	return nil
}

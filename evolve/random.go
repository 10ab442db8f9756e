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
	h     history
}

// NewRandom returns random search over space, seeded by seed.
func NewRandom(space *genome.Space, seed uint64) *Random {
	if space == nil {
		panic("evolve: nil space")
	}
	pcg := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	r := &Random{space: space, pcg: pcg, rng: rand.New(pcg)}
	r.h.init()
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
		r.h.ask(c)
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
		r.h.tell(res)
	}
	return nil
}

type randomState struct {
	V    int     `json:"v"`
	Kind string  `json:"kind"`
	RNG  []byte  `json:"rng"`
	H    history `json:"history"`
}

// MarshalBinary implements Strategy.
func (r *Random) MarshalBinary() ([]byte, error) {
	rng, err := r.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return json.Marshal(randomState{V: 1, Kind: r.Name(), RNG: rng, H: r.h})
}

// UnmarshalBinary implements Strategy.
func (r *Random) UnmarshalBinary(data []byte) error {
	var st randomState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	if st.V != 1 || st.Kind != r.Name() {
		return fmt.Errorf("%w: kind %q version %d, want %q version 1", ErrBadState, st.Kind, st.V, r.Name())
	}
	if err := checkHistory(r.space, &st.H); err != nil {
		return err
	}
	if err := r.pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("%w: rng: %w", ErrBadState, err)
	}
	r.h = st.H
	r.h.init()
	return nil
}

func checkHistory(s *genome.Space, h *history) error {
	for i, t := range h.Told {
		if !s.InRange(t.Config) {
			return fmt.Errorf("%w: told[%d] not in space", ErrBadState, i)
		}
	}
	for i, c := range h.Pending {
		if !s.InRange(c) {
			return fmt.Errorf("%w: pending[%d] not in space", ErrBadState, i)
		}
	}
	return nil
}

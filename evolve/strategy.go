package evolve

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/quasim/quasim/genome"
)

// Result is what a strategy learns from one measured config.
type Result struct {
	Config genome.Config `json:"c"`
	OK     bool          `json:"ok"`          // the config ran and produced a valid objective
	Value  float64       `json:"v,omitempty"` // objective, lower is better; meaningful when OK
}

// Strategy is a search algorithm with an ask/tell interface. Its state
// marshals to bytes (a policy) so a run can stop anywhere and resume exactly.
type Strategy interface {
	// Name is the strategy's registered name, e.g. "es".
	Name() string
	// Ask returns up to n distinct valid configs that were neither told nor
	// asked before. Fewer (or none) means the space is exhausted.
	Ask(n int) ([]genome.Config, error)
	// Tell reports measured configs, in any order. Configs the strategy did
	// not ask for are welcome too: every strategy learns from every trial.
	Tell(results []Result) error

	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Withdrawer is a strategy that can take back a config it proposed that
// will not be measured (a pooled portfolio measures one proposal of
// several), so it neither waits for its result nor is barred from
// proposing it again.
type Withdrawer interface {
	Withdraw(c genome.Config)
}

// Errors shared by strategies.
var (
	// ErrBadState is returned by UnmarshalBinary for bytes that are not a
	// state of this strategy on this space.
	ErrBadState = errors.New("bad strategy state")
	// ErrBadResult is returned by Tell for a config outside the space.
	ErrBadResult = errors.New("result config not in space")
)

func checkResult(s *genome.Space, r Result) error {
	if !s.InRange(r.Config) {
		return fmt.Errorf("%w: %v", ErrBadResult, []int(r.Config))
	}
	return nil
}

// fitness orders results: valid ones by value, failed ones last.
func fitness(r Result) float64 {
	if !r.OK {
		return math.Inf(1)
	}
	return r.Value
}

// sampleUnknown draws a valid config uniformly from those not yet asked or
// told; nil when none is left.
func sampleUnknown(rng *rand.Rand, s *genome.Space, h *History) genome.Config {
	return SampleUnseen(rng, s, h.Seen(), h.Known)
}

// SampleUnseen draws a valid config of s uniformly from those for which
// known is false; nil when none is left. seen is how many configs are known,
// which picks the method: rejection while most configs are unseen, else a
// draw from the list of the rest. Strategies share it so that they draw the
// same way from the same random stream. On a space too large to list
// (genome.Space.Enumerable) it rejects known configs from genome's uniform
// sampler, which lists nothing.
func SampleUnseen(rng *rand.Rand, s *genome.Space, seen int, known func(genome.Config) bool) genome.Config {
	if !s.Enumerable() {
		return sampleUnseenLarge(rng, s, seen, known)
	}
	all := s.All()
	if seen < len(all)/2 {
		for {
			c := all[rng.IntN(len(all))]
			if !known(c) {
				return c.Clone()
			}
		}
	}
	var left []genome.Config
	for _, c := range all {
		if !known(c) {
			left = append(left, c)
		}
	}
	if len(left) == 0 {
		return nil
	}
	return left[rng.IntN(len(left))].Clone()
}

// sampleUnseenLarge is SampleUnseen on a space that is not listed. Such a
// space holds more than genome.EnumLimit configs, so few are known and a
// rejection is rare; it gives up (nil) only after many in a row.
func sampleUnseenLarge(rng *rand.Rand, s *genome.Space, seen int, known func(genome.Config) bool) genome.Config {
	if n, ok := s.Count(); ok && uint64(seen) >= n {
		return nil
	}
	for range 1 << 12 {
		c, err := s.Sample(rng)
		if err != nil {
			return nil
		}
		if !known(c) {
			return c
		}
	}
	return nil
}

// stateHeader leads every strategy's marshalled state.
type stateHeader struct {
	V    int     `json:"v"`
	Kind string  `json:"kind"`
	RNG  []byte  `json:"rng"`
	H    History `json:"history"`
}

// restore checks a decoded header against the strategy and space, and
// restores the random source from it.
func (h *stateHeader) restore(kind string, s *genome.Space, pcg *rand.PCG) error {
	if h.V != 1 || h.Kind != kind {
		return fmt.Errorf("%w: kind %q version %d, want %q version 1", ErrBadState, h.Kind, h.V, kind)
	}
	if err := h.H.Check(s); err != nil {
		return err
	}
	if err := pcg.UnmarshalBinary(h.RNG); err != nil {
		return fmt.Errorf("%w: rng: %w", ErrBadState, err)
	}
	h.RNG = nil
	h.H.Init()
	return nil
}

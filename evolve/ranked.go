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

// Ranked is rank transfer as a strategy, so a portfolio's bandit can keep
// or drop it as it pays off. Devices that disagree on which configs are
// fastest often still agree on what one parameter change does, so it
// proposes, among the unknown configs that differ from the best one
// measured here in one parameter, the one the ranking puts first; when no
// such config is ranked, the next config of the ranking itself. Once both
// run out it proposes nothing.
type Ranked struct {
	space *genome.Space
	pcg   *rand.PCG
	st    rankedState
	rank  map[string]int // packed config -> position in Prior
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
	r.st.H.Init()
	r.index()
	return r
}

func (r *Ranked) index() {
	r.rank = make(map[string]int, len(r.st.Prior))
	for i, c := range r.st.Prior {
		if _, dup := r.rank[pack(c)]; !dup {
			r.rank[pack(c)] = i
		}
	}
}

// Name implements Strategy.
func (r *Ranked) Name() string { return TransferName }

// Ask implements Strategy.
func (r *Ranked) Ask(n int) ([]genome.Config, error) {
	var out []genome.Config
	for len(out) < n {
		c := r.local()
		for c == nil && r.st.Next < len(r.st.Prior) {
			if p := r.st.Prior[r.st.Next]; !r.st.H.Known(p) {
				c = p
			}
			r.st.Next++
		}
		if c == nil {
			break
		}
		r.st.H.Ask(c)
		out = append(out, c.Clone())
	}
	return out, nil
}

// local is the best-ranked unknown valid config one parameter away from
// the best valid config told, or nil.
func (r *Ranked) local() genome.Config {
	bi := -1
	for i, t := range r.st.H.Told {
		if t.OK && (bi < 0 || t.Value < r.st.H.Told[bi].Value) {
			bi = i
		}
	}
	if bi < 0 {
		return nil
	}
	var pick genome.Config
	pickRank := len(r.st.Prior)
	c := r.st.H.Told[bi].Config.Clone()
	for i, p := range r.space.Params() {
		orig := c[i]
		for v := range p.Values {
			if v == orig {
				continue
			}
			c[i] = v
			if k, ok := r.rank[pack(c)]; ok && k < pickRank && !r.st.H.Known(c) && r.space.Valid(c) {
				pick, pickRank = c.Clone(), k
			}
		}
		c[i] = orig
	}
	return pick
}

// Tell implements Strategy.
func (r *Ranked) Tell(results []Result) error {
	for _, res := range results {
		if err := checkResult(r.space, res); err != nil {
			return err
		}
	}
	for _, res := range results {
		r.st.H.Tell(res)
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
	r.index()
	return nil
}

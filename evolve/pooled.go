package evolve

import (
	"math"
	"math/rand/v2"

	"github.com/quasim/quasim/genome"
)

// pooled is the step of JudgeMean and JudgeEI: every member not spent
// proposes a config, the judge scores them all, and the best is measured.
// The others are taken back from the members that proposed them
// (Withdrawer), which may propose them again once more is known. The aim
// was to keep each member's good ideas without paying for its poor ones;
// on the recorded spaces one model's choice made the portfolio that
// model's search and lost to the bandit (docs/evidence/search-quality.md).
func (p *Portfolio) pooled() (genome.Config, int, error) {
	type nominee struct {
		c     genome.Config
		owner int
	}
	var pool []nominee
	for i := range p.strats {
		if p.idle(i) {
			continue
		}
		c, err := p.propose(i)
		if err != nil {
			return nil, 0, err
		}
		if c != nil {
			pool = append(pool, nominee{c, i})
		}
	}
	if len(pool) == 0 {
		return sampleUnknown(p.rng, p.space, &p.st.H), ownerDesign, nil
	}
	j := p.judged()
	best, bestS := 0, math.Inf(-1)
	for k, n := range pool {
		// Ties (two members proposing one config) go to the first.
		if s := j.score(n.c); s > bestS {
			best, bestS = k, s
		}
	}
	for k, n := range pool {
		if k == best {
			continue
		}
		if w, ok := p.strats[n.owner].(Withdrawer); ok {
			w.Withdraw(n.c)
		}
	}
	return pool[best].c, pool[best].owner, nil
}

// screen asks member i for up to Screen-1 configs beside first and
// returns the one the judge scores highest; the others are withdrawn.
func (p *Portfolio) screen(i int, first genome.Config) (genome.Config, error) {
	cands := []genome.Config{first}
	for range p.opt.Screen - 1 {
		cs, err := p.strats[i].Ask(1)
		if err != nil {
			return nil, err
		}
		if len(cs) == 0 {
			break
		}
		cands = append(cands, cs[0])
	}
	j := p.judged()
	best, bestS := 0, math.Inf(-1)
	for k, c := range cands {
		if p.st.H.Known(c) {
			continue
		}
		if s := j.score(c); s > bestS {
			best, bestS = k, s
		}
	}
	w, _ := p.strats[i].(Withdrawer)
	for k, c := range cands {
		if k != best && w != nil && !p.st.H.Known(c) {
			w.Withdraw(c)
		}
	}
	return cands[best], nil
}

// judgeRefitAll is how many results the judge is refitted at every step
// up to; past it, when the history has grown by a tenth, as the forest
// member does, so the cost per evaluation stays flat.
const judgeRefitAll = 400

// judged returns the judge, fitted when due. Each fit draws from its own
// stream, seeded by the seed and the results fitted, so a resumed run
// refits the same judge.
func (p *Portfolio) judged() *judge {
	n := len(p.st.H.Told)
	if p.judge == nil && p.st.JudgeAt == 0 ||
		n != p.st.JudgeAt && (n <= judgeRefitAll || float64(n) >= 1.1*float64(p.st.JudgeAt)) {
		p.st.JudgeAt, p.judge = n, nil
	}
	if p.judge == nil {
		at := p.st.JudgeAt
		rng := rand.New(rand.NewPCG(p.st.Seed, uint64(at)^0x9e3779b97f4a7c15))
		p.judge = fitJudge(rng, p.st.H.Told[:at], p.levels, p.opt.FailureModel)
		p.judge.mean = p.opt.Judge == JudgeMean
	}
	return p.judge
}

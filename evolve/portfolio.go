package evolve

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/quasim/quasim/genome"
)

// Member is one strategy of a portfolio, made by its factory.
type Member struct {
	Name string
	New  Factory
	// From and Until bound the evaluations (asked so far, the design
	// included) during which the bandit may give the member one: a member
	// joins at From and retires at Until (0: no bound). Outside its window
	// it is still told every result, so it joins knowing the history.
	From, Until int
	// First has the member propose before the bandit picks whenever it is
	// in its window and has something to propose: a member that proposes
	// only a bounded sweep (local with Incumbent) then polishes every new
	// best, and the bandit allocates the rest.
	First bool
}

// PortfolioOptions tunes the portfolio. Zero values take the defaults.
type PortfolioOptions struct {
	Init     int     // configs of the initial space-filling design (default 10)
	Discount float64 // discount of old rewards in the bandit (default 0.95)
	Explore  float64 // UCB exploration weight (default 0.2)
	// Uniform gives each evaluation to a member drawn uniformly at random
	// instead of by the bandit: the baseline the bandit must beat.
	Uniform bool
	// RoundRobin gives the evaluations to the members in turn: the other
	// baseline, as even as an allocation gets.
	RoundRobin bool
	// Reward is how a member's proposal is rewarded: RewardBest (default),
	// 1 for a new best and 0 otherwise, or RewardRank, the squared share
	// of earlier results it beats.
	Reward string
	// Candidates is how many random configs the design picks each of
	// its configs among, the farthest from those asked (default 16; 1 is
	// a random design).
	Candidates int
	// Judge is how the next evaluation is chosen after the design:
	// JudgeBandit (default), the bandit's member proposes it; JudgeMean or
	// JudgeEI, every member proposes one and a forest fitted to the
	// shared history measures the one of lowest predicted log value or of
	// highest expected improvement (pooled.go). Neither beat the bandit on
	// the recorded spaces (docs/evidence/search-quality.md).
	Judge string
	// Screen, above 1, has the bandit's member propose this many configs
	// and the judge (expected improvement) keep the best of them, the
	// rest withdrawn: the member's search, the model's pre-selection.
	Screen int
	// FailureModel makes the judge fit a second forest to which configs
	// failed and discount each proposal by its chance of failing, with
	// the first fitted to the configs that ran; without it, failed
	// configs are fitted as slow ones (the worst log value plus one), as
	// the forest member does. With Screen it measured fewer failed
	// configs on the recorded spaces that have them; off by default, as
	// no judged portfolio beat the bandit held out.
	FailureModel bool
}

// Judges of the portfolio.
const (
	JudgeBandit = "bandit"
	JudgeEI     = "ei"
	JudgeMean   = "mean"
)

// Rewards of the portfolio's bandit.
const (
	RewardRank = "rank"
	RewardBest = "best"
)

// defaultInit is the size of the portfolio's default initial design.
const defaultInit = 10

func (o *PortfolioOptions) defaults() {
	if o.Init <= 0 {
		o.Init = defaultInit
	}
	if o.Discount <= 0 || o.Discount > 1 {
		o.Discount = 0.95
	}
	if o.Explore <= 0 {
		o.Explore = 0.2
	}
	if o.Candidates <= 0 {
		o.Candidates = 16
	}
	if o.Reward == "" {
		o.Reward = RewardBest
	}
	if o.Judge == "" {
		o.Judge = JudgeBandit
	}
}

// Portfolio gives each next evaluation to the member strategy that is
// paying off, by a discounted UCB bandit whose reward is 1 when the config
// a member proposed became the best so far. All members share one history:
// every member is told every result, whoever proposed it. The first Init
// configs are a space-filling design (greedy maximin over random
// candidates), told to every member.
type Portfolio struct {
	space   *genome.Space
	opt     PortfolioOptions
	members []Member
	strats  []Strategy
	pcg     *rand.PCG
	rng     *rand.Rand
	st      portfolioState
	judge   *judge // JudgeEI's, fitted to the first st.JudgeAt results
	levels  []int
}

type portfolioState struct {
	stateHeader
	Plays   []float64         `json:"plays"`   // discounted play counts per member
	Rewards []float64         `json:"rewards"` // discounted rewards per member
	Alloc   []int             `json:"alloc"`   // evaluations given to each member, undiscounted
	Owner   map[string]int    `json:"owner"`   // pending config key -> member index, or ownerDesign, ownerWarm
	Best    *float64          `json:"best,omitempty"`
	Prior   []genome.Config   `json:"prior,omitempty"` // warm-start configs not yet asked
	Design  int               `json:"design"`          // evaluations of the design and the prior
	Spent   map[string]bool   `json:"spent,omitempty"` // members that proposed nothing when asked
	Members map[string][]byte `json:"members"`         // each member's own state, when marshalled
	Seed    uint64            `json:"seed,omitempty"`
	JudgeAt int               `json:"judge_at,omitempty"` // results the judge was fitted to
}

// NewPortfolio returns a portfolio over members, seeded by seed.
func NewPortfolio(space *genome.Space, seed uint64, members []Member, opt PortfolioOptions) *Portfolio {
	if space == nil {
		panic("evolve: nil space")
	}
	if len(members) == 0 {
		panic("evolve: portfolio without members")
	}
	opt.defaults()
	pcg := rand.NewPCG(seed, seed^0x7f4a7c159e3779b9)
	p := &Portfolio{space: space, opt: opt, members: members, pcg: pcg, rng: rand.New(pcg)}
	for i, m := range members {
		p.strats = append(p.strats, m.New(space, seed*1000003+uint64(i)+1))
	}
	n := len(members)
	p.st.Plays, p.st.Rewards, p.st.Alloc = make([]float64, n), make([]float64, n), make([]int, n)
	p.st.Owner = map[string]int{}
	p.st.Seed = seed
	p.st.H.Init()
	for _, q := range space.Params() {
		p.levels = append(p.levels, len(q.Values))
	}
	return p
}

// Name implements Strategy.
func (p *Portfolio) Name() string { return "portfolio" }

// Names of the portfolio's own proposals in Allocation and ProposedBy.
const (
	DesignName = "design" // the initial space-filling design
	WarmName   = "warm"   // the warm-start prior
)

// Allocation returns how many evaluations each member was given, and under
// DesignName the initial design and prior together.
func (p *Portfolio) Allocation() map[string]int {
	out := make(map[string]int, len(p.members)+1)
	for i, m := range p.members {
		out[m.Name] = p.st.Alloc[i]
	}
	out[DesignName] = p.st.Design
	return out
}

// ProposedBy names the member that proposed c, DesignName or WarmName for
// the portfolio's own, and "" for a config that is not pending.
func (p *Portfolio) ProposedBy(c genome.Config) string {
	o, ok := p.st.Owner[p.space.Key(c)]
	switch {
	case !ok:
		return ""
	case o == ownerWarm:
		return WarmName
	case o < 0:
		return DesignName
	}
	return p.members[o].Name
}

// Owners of configs the portfolio proposed itself.
const (
	ownerDesign = -1
	ownerWarm   = -2
)

// WarmStart implements WarmStarter. The first configs of prior, half as
// many as the initial design holds, are measured instead of the design,
// and the head of the ranking (the best 10% of the valid configs, at least
// twice the design; on a space too large to list, 10% of the ranking) joins the members as a Ranked strategy named
// TransferName, so the bandit follows it only while it pays off: a related
// device can rank this one's configs well or badly. Call it before the
// first Ask, at most once. Members that are WarmStarters (es, forest,
// quantumsearch) take the prior too and keep its head in their states.
func (p *Portfolio) WarmStart(prior []genome.Config) {
	if len(prior) == 0 || p.warm() {
		return
	}
	p.st.Prior = nil
	for _, c := range prior {
		if len(p.st.Prior) == max(1, p.opt.Init/2) {
			break
		}
		if p.space.InRange(c) && !p.st.H.Known(c) {
			p.st.Prior = append(p.st.Prior, c.Clone())
		}
	}
	// Members that take a prior (es, forest, quantumsearch) get it too, so
	// the model-based ones lean on it where the ranking transfers and learn
	// past it where it does not.
	for _, s := range p.strats {
		if ws, ok := s.(WarmStarter); ok {
			ws.WarmStart(prior)
		}
	}
	// Only the head of a ranking carries much: past it the member would
	// cost evaluations where the devices disagree.
	t := NewRanked(p.space, prior[:min(len(prior), priorHead(p.space, len(prior), p.opt.Init))])
	for _, r := range p.st.H.Told {
		t.st.H.Tell(r)
	}
	p.addMember(Member{Name: TransferName, New: func(s *genome.Space, _ uint64) Strategy { return NewRanked(s, nil) }}, t)
}

// warm reports whether the portfolio was warm-started.
func (p *Portfolio) warm() bool {
	return slices.ContainsFunc(p.members, func(m Member) bool { return m.Name == TransferName })
}

func (p *Portfolio) addMember(m Member, s Strategy) {
	p.members = append(slices.Clone(p.members), m)
	p.strats = append(p.strats, s)
	p.st.Plays = append(p.st.Plays, 0)
	p.st.Rewards = append(p.st.Rewards, 0)
	p.st.Alloc = append(p.st.Alloc, 0)
}

// Ask implements Strategy.
func (p *Portfolio) Ask(n int) ([]genome.Config, error) {
	var out []genome.Config
	for range n {
		c, owner, err := p.next()
		if err != nil {
			return out, err
		}
		if c == nil {
			break
		}
		p.st.H.Ask(c)
		p.st.Owner[p.space.Key(c)] = owner
		if owner >= 0 {
			p.st.Alloc[owner]++
		} else {
			p.st.Design++
		}
		out = append(out, c)
	}
	return out, nil
}

func (p *Portfolio) next() (genome.Config, int, error) {
	for len(p.st.Prior) > 0 {
		c := p.st.Prior[0]
		p.st.Prior = p.st.Prior[1:]
		if !p.st.H.Known(c) {
			return c, ownerWarm, nil
		}
	}
	// A warm start's prior stands in for the design.
	if len(p.st.H.Told)+len(p.st.H.Pending) < p.opt.Init && !p.warm() {
		return p.design(), ownerDesign, nil
	}
	if p.opt.Judge != JudgeBandit {
		return p.pooled()
	}
	arm := p.pick()
	for arm >= 0 {
		c, err := p.propose(arm)
		if err == nil && c != nil && p.opt.Screen > 1 {
			c, err = p.screen(arm, c)
		}
		if err != nil || c != nil {
			return c, arm, err
		}
		arm = p.pick()
	}
	return sampleUnknown(p.rng, p.space, &p.st.H), ownerDesign, nil
}

// propose asks member i for a config the portfolio does not know. A
// member with nothing left (a ranking run to its end, or a space it has
// exhausted) is marked spent and gives nil.
func (p *Portfolio) propose(i int) (genome.Config, error) {
	for range 8 {
		cs, err := p.strats[i].Ask(1)
		if err != nil {
			return nil, fmt.Errorf("%s ask: %w", p.members[i].Name, err)
		}
		if len(cs) == 0 {
			break
		}
		// Another member may have proposed it in this batch; its result
		// reaches this member with everyone's, so nothing is lost.
		if !p.st.H.Known(cs[0]) {
			return cs[0], nil
		}
	}
	if p.st.Spent == nil {
		p.st.Spent = map[string]bool{}
	}
	p.st.Spent[p.members[i].Name] = true
	return nil, nil
}

// pick is discounted UCB1 over the members not spent: unplayed ones
// first, then mean reward plus an exploration bonus; -1 when all are spent.
// Evaluations asked and not yet told count as plays without reward, so a
// batch is spread over the members that look alike instead of going to one.
func (p *Portfolio) pick() int {
	for i, m := range p.members {
		if m.First && !p.idle(i) {
			return i
		}
	}
	if p.opt.Uniform || p.opt.RoundRobin {
		var live []int
		for i := range p.members {
			if !p.idle(i) {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			return -1
		}
		if p.opt.RoundRobin {
			return live[(len(p.st.H.Told)+len(p.st.H.Pending))%len(live)]
		}
		return live[p.rng.IntN(len(live))]
	}
	plays := slices.Clone(p.st.Plays)
	for _, o := range p.st.Owner {
		if o >= 0 {
			plays[o]++
		}
	}
	total := 0.0
	for i, n := range plays {
		if p.idle(i) {
			continue
		}
		if n == 0 && p.st.Alloc[i] == 0 {
			return i
		}
		total += n
	}
	best, bestScore := -1, math.Inf(-1)
	for i, n := range plays {
		if p.idle(i) {
			continue
		}
		n = math.Max(n, 1e-9)
		score := p.st.Rewards[i]/n + p.opt.Explore*math.Sqrt(2*math.Log(math.Max(total, 1))/n)
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// idle reports whether member i may not be given the next evaluation:
// it proposed nothing when last asked, or the evaluations asked so far are
// outside its window.
func (p *Portfolio) idle(i int) bool {
	m := p.members[i]
	asked := len(p.st.H.Told) + len(p.st.H.Pending)
	return p.st.Spent[m.Name] || asked < m.From || (m.Until > 0 && asked >= m.Until)
}

// design picks the unseen config farthest from everything asked so far,
// among a few random candidates: a cheap space-filling design.
func (p *Portfolio) design() genome.Config {
	var best genome.Config
	bestD := -1.0
	for range p.opt.Candidates {
		c := sampleUnknown(p.rng, p.space, &p.st.H)
		if c == nil {
			break
		}
		d := math.Inf(1)
		for _, r := range p.st.H.Told {
			d = math.Min(d, p.space.Distance(c, r.Config))
		}
		for _, q := range p.st.H.Pending {
			d = math.Min(d, p.space.Distance(c, q))
		}
		if d > bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Tell implements Strategy: every member learns every result; the member
// that proposed a config is rewarded when it became the best so far.
func (p *Portfolio) Tell(results []Result) error {
	for _, r := range results {
		if err := checkResult(p.space, r); err != nil {
			return err
		}
	}
	for _, r := range results {
		key := p.space.Key(r.Config)
		owner, mine := p.st.Owner[key]
		delete(p.st.Owner, key)
		if !p.st.H.Tell(r) {
			continue
		}
		improved := r.OK && (p.st.Best == nil || r.Value < *p.st.Best)
		if improved {
			v := r.Value
			p.st.Best = &v
			// A member that had nothing to propose (the local sweep
			// with the old best's neighbourhood known) may have now.
			p.st.Spent = nil
		}
		if mine && owner >= 0 {
			for i := range p.st.Plays {
				p.st.Plays[i] *= p.opt.Discount
				p.st.Rewards[i] *= p.opt.Discount
			}
			p.st.Plays[owner]++
			p.st.Rewards[owner] += p.reward(r, improved)
		}
	}
	for i, s := range p.strats {
		if err := s.Tell(results); err != nil {
			return fmt.Errorf("%s tell: %w", p.members[i].Name, err)
		}
	}
	return nil
}

// reward is 1 for a new best. With RewardRank it is the share of earlier
// valid results that r beats, squared so that only results near the top
// pay much: 1 for a new best, 0 for a failure or the worst. Rewarding only
// new bests was chosen by leave-one-space-out (docs/evidence/search-quality.md): a
// member that ranks well proposal by proposal, near the top but never on
// it, wins less than one whose walk reaches new bests.
func (p *Portfolio) reward(r Result, improved bool) float64 {
	if !r.OK {
		return 0
	}
	if p.opt.Reward == RewardBest {
		if improved {
			return 1
		}
		return 0
	}
	beaten, n := 0, 0
	for _, t := range p.st.H.Told[:len(p.st.H.Told)-1] {
		if t.OK {
			n++
			if r.Value < t.Value {
				beaten++
			}
		}
	}
	if n == 0 {
		return 1
	}
	q := float64(beaten) / float64(n)
	return q * q
}

// MarshalBinary implements Strategy.
func (p *Portfolio) MarshalBinary() ([]byte, error) {
	rng, err := p.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := p.st
	st.V, st.Kind, st.RNG = 1, p.Name(), rng
	st.Members = map[string][]byte{}
	for i, s := range p.strats {
		b, err := s.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.members[i].Name, err)
		}
		st.Members[p.members[i].Name] = b
	}
	return json.Marshal(st)
}

// UnmarshalBinary implements Strategy. On error the portfolio is unchanged.
func (p *Portfolio) UnmarshalBinary(data []byte) error {
	var st portfolioState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	members := p.members
	if _, ok := st.Members[TransferName]; ok && !slices.ContainsFunc(members, func(m Member) bool { return m.Name == TransferName }) {
		members = append(slices.Clone(members), Member{Name: TransferName, New: func(s *genome.Space, _ uint64) Strategy { return NewRanked(s, nil) }})
	}
	n := len(members)
	added := addedMembers(members, st.Members)
	if len(added) > 0 && len(st.Plays) == n-len(added) {
		st.insertMembers(added)
	}
	if len(st.Plays) != n || len(st.Rewards) != n || len(st.Alloc) != n {
		return fmt.Errorf("%w: state of %d members, portfolio has %d", ErrBadState, len(st.Plays), n)
	}
	strats := make([]Strategy, n)
	for i, m := range members {
		b, ok := st.Members[m.Name]
		if !ok && slices.Contains(added, i) {
			// A member added since the state was written starts afresh,
			// knowing every result so far.
			strats[i] = m.New(p.space, uint64(len(st.H.Told))*1000003+uint64(i)+1)
			if err := strats[i].Tell(st.H.Told); err != nil {
				return fmt.Errorf("member %s: %w", m.Name, err)
			}
			continue
		}
		if !ok {
			return fmt.Errorf("%w: no state for member %q", ErrBadState, m.Name)
		}
		strats[i] = m.New(p.space, 0)
		if err := strats[i].UnmarshalBinary(b); err != nil {
			return fmt.Errorf("member %s: %w", m.Name, err)
		}
	}
	for k, o := range st.Owner {
		if o < ownerWarm || o >= n {
			return fmt.Errorf("%w: owner %d of %q", ErrBadState, o, k)
		}
	}
	for i, c := range st.Prior {
		if !p.space.InRange(c) {
			return fmt.Errorf("%w: prior[%d] not in space", ErrBadState, i)
		}
	}
	pcg := *p.pcg
	if err := st.restore(p.Name(), p.space, &pcg); err != nil {
		return err
	}
	*p.pcg = pcg
	if st.Owner == nil {
		st.Owner = map[string]int{}
	}
	st.Members = nil
	p.st, p.strats, p.members, p.judge = st, strats, members, nil
	return nil
}

// addedMembers lists the indices of members that have no state in a
// marshalled portfolio: members added to the portfolio since (forest, in
// quasim's history). An empty state map (not a portfolio's) adds none.
func addedMembers(members []Member, states map[string][]byte) []int {
	if len(states) == 0 {
		return nil
	}
	var out []int
	for i, m := range members {
		if _, ok := states[m.Name]; !ok {
			out = append(out, i)
		}
	}
	return out
}

// insertMembers makes room in the bandit's arrays for members added at
// the given indices (ascending), unplayed, and renumbers the owners of
// pending configs. The other members kept their order, which is the
// portfolio's order with the new ones left out.
func (st *portfolioState) insertMembers(at []int) {
	for _, i := range at {
		st.Plays = slices.Insert(st.Plays, i, 0)
		st.Rewards = slices.Insert(st.Rewards, i, 0)
		st.Alloc = slices.Insert(st.Alloc, i, 0)
		for k, o := range st.Owner {
			if o >= i {
				st.Owner[k] = o + 1
			}
		}
	}
}

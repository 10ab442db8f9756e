package schedules

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
)

// Options tunes SPSA. Zero values take the defaults documented in the
// package comment.
type Options struct {
	Init      int     // random configs measured before θ0 (default 8)
	A         float64 // step gain numerator a (default 0.25)
	C         float64 // perturbation gain numerator c, as a fraction of [0,1] (default 0.15)
	Alpha     float64 // step gain decay exponent α (default 0.602)
	Gamma     float64 // perturbation gain decay exponent γ (default 0.101)
	Stability float64 // Spall's stability constant S in a_k = a/(S+k+1)^α (default 5)
	Patience  int     // iterations the rounded θ may stay put before a restart (default 4)
	Restarts  int     // most restarts; 0 means no limit, negative means none
}

func (o *Options) defaults() {
	if o.Init <= 0 {
		o.Init = 8
	}
	if o.A <= 0 {
		o.A = 0.25
	}
	if o.C <= 0 {
		o.C = 0.15
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.602
	}
	if o.Gamma <= 0 {
		o.Gamma = 0.101
	}
	if o.Stability <= 0 {
		o.Stability = 5
	}
	if o.Patience <= 0 {
		o.Patience = 4
	}
}

const (
	maxStep = 0.25 // largest change of one θ_i in one update
	maxFree = 4    // iterations in a row that may use only stored losses
	version = 1
)

// Record is one SPSA update, kept for inspection.
type Record struct {
	Iter    int       `json:"iter"`    // update number over the whole run
	Theta   []float64 `json:"theta"`   // θ after the update
	Loss    float64   `json:"loss"`    // mean loss of the perturbed points
	Config  string    `json:"config"`  // key of the rounded θ after the update
	GainA   float64   `json:"gain_a"`  // a_k used
	GainC   float64   `json:"gain_c"`  // c_k used
	Restart bool      `json:"restart"` // the update triggered a restart
	Free    bool      `json:"free"`    // every loss came from stored results
}

// SPSA is simultaneous perturbation stochastic approximation over the
// relaxed index space of a genome.Space. See the package comment.
type SPSA struct {
	space *genome.Space
	opt   Options
	pcg   *rand.PCG
	rng   *rand.Rand
	st    state
}

var _ evolve.Strategy = (*SPSA)(nil)

type pair struct {
	Delta []int8        `json:"d"`
	C     []float64     `json:"c"` // per-parameter perturbation used
	Plus  genome.Config `json:"p"`
	Minus genome.Config `json:"m"`
}

type state struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	RNG  []byte `json:"rng"`
	evolve.History
	Theta    []float64       `json:"theta,omitempty"`
	K        int             `json:"k"`     // iteration since the last restart
	Iter     int             `json:"iter"`  // updates over the run
	Stale    int             `json:"stale"` // updates the rounded θ did not move
	Free     int             `json:"free"`  // free updates in a row
	Restarts int             `json:"restarts"`
	Pairs    []pair          `json:"pairs,omitempty"` // the open iteration
	Queue    []genome.Config `json:"queue,omitempty"` // its configs not yet asked
	Records  []Record        `json:"records,omitempty"`
}

// New returns SPSA over space, seeded by seed. It panics on a nil space.
func New(space *genome.Space, seed uint64, opt Options) *SPSA {
	if space == nil {
		panic("schedules: nil space")
	}
	opt.defaults()
	pcg := rand.NewPCG(seed, seed^0x94d049bb133111eb)
	s := &SPSA{space: space, opt: opt, pcg: pcg, rng: rand.New(pcg)}
	s.index()
	return s
}

// Name implements evolve.Strategy.
func (s *SPSA) Name() string { return "schedules-spsa" }

// Records returns the updates made so far, oldest first. The caller must not
// modify them.
func (s *SPSA) Records() []Record { return s.st.Records }

func pack(c genome.Config) string {
	b := make([]byte, 0, 2*len(c))
	for _, v := range c {
		b = append(b, byte(v), byte(v>>8))
	}
	return string(b)
}

func (s *SPSA) index() { s.st.Init() }

func (s *SPSA) known(c genome.Config) bool { return s.st.Known(c) }

// told returns the index of c's result, or -1.
func (s *SPSA) told(c genome.Config) int { return s.st.Index(c) }

func (s *SPSA) markAsked(c genome.Config) { s.st.Ask(c) }

// Ask implements evolve.Strategy.
func (s *SPSA) Ask(n int) ([]genome.Config, error) {
	var out []genome.Config
	for len(out) < n {
		c := s.next(n - len(out))
		if c == nil {
			break
		}
		s.markAsked(c)
		out = append(out, c)
	}
	return out, nil
}

// next picks one config to propose; want is how many the caller still wants.
func (s *SPSA) next(want int) genome.Config {
	if c := s.popQueue(); c != nil {
		return c
	}
	if len(s.st.Pairs) > 0 || len(s.st.Told)+len(s.st.Pending) < s.opt.Init || !s.ensureTheta() {
		return s.sampleUnknown()
	}
	for {
		forced := s.st.Free >= maxFree
		if !s.open(max(1, want/2), forced) {
			break
		}
		if c := s.popQueue(); c != nil {
			return c
		}
		if len(s.st.Pairs) > 0 {
			break // waiting on configs asked by someone else
		}
		if forced {
			break // the space has nothing left near θ
		}
	}
	return s.sampleUnknown()
}

func (s *SPSA) popQueue() genome.Config {
	for len(s.st.Queue) > 0 {
		c := s.st.Queue[0]
		s.st.Queue = s.st.Queue[1:]
		if !s.known(c) {
			return c
		}
	}
	s.st.Queue = nil
	return nil
}

// ensureTheta sets θ0 to the best measured config; false while none is OK.
func (s *SPSA) ensureTheta() bool {
	if s.st.Theta != nil {
		return true
	}
	b := s.best()
	if b < 0 {
		return false
	}
	s.st.Theta = s.relax(s.st.Told[b].Config)
	return true
}

// best returns the index of the best OK result, or -1.
func (s *SPSA) best() int {
	b := -1
	for i, r := range s.st.Told {
		if r.OK && (b < 0 || r.Value < s.st.Told[b].Value) {
			b = i
		}
	}
	return b
}

func (s *SPSA) relax(c genome.Config) []float64 {
	th := make([]float64, len(c))
	for i, p := range s.space.Params() {
		if n := len(p.Values); n > 1 {
			th[i] = float64(c[i]) / float64(n-1)
		}
	}
	return th
}

func (s *SPSA) round(th []float64) genome.Config {
	c := make(genome.Config, len(th))
	for i, p := range s.space.Params() {
		n := len(p.Values)
		c[i] = min(max(int(math.Round(min(max(th[i], 0), 1)*float64(n-1))), 0), n-1)
	}
	return c
}

func (s *SPSA) gains() (a, c float64) {
	k := float64(s.st.K)
	a = s.opt.A / math.Pow(s.opt.Stability+k+1, s.opt.Alpha)
	c = s.opt.C / math.Pow(k+1, s.opt.Gamma)
	return a, c
}

// open starts an iteration of m pairs around θ. Points that land on
// measured configs use their stored loss unless forced, in which case they
// move to the nearest unmeasured valid config. When every point is stored
// the iteration resolves at once (a free update). It reports false when a
// point had nowhere to go.
func (s *SPSA) open(m int, forced bool) bool {
	params := s.space.Params()
	_, ck := s.gains()
	s.st.Pairs, s.st.Queue = nil, nil
	for range m {
		p := pair{Delta: make([]int8, len(params)), C: make([]float64, len(params))}
		plus := make([]float64, len(params))
		minus := make([]float64, len(params))
		for i, pr := range params {
			d := int8(1)
			if s.rng.IntN(2) == 0 {
				d = -1
			}
			p.Delta[i] = d
			ci := ck
			if n := len(pr.Values); n > 1 {
				ci = max(ck, 0.51/float64(n-1))
			}
			p.C[i] = ci
			plus[i] = s.st.Theta[i] + ci*float64(d)
			minus[i] = s.st.Theta[i] - ci*float64(d)
		}
		p.Plus = s.place(plus, forced)
		p.Minus = s.place(minus, forced)
		if p.Plus == nil || p.Minus == nil {
			s.st.Pairs, s.st.Queue = nil, nil
			return false
		}
		s.st.Pairs = append(s.st.Pairs, p)
	}
	if len(s.st.Queue) == 0 {
		s.resolve(true)
	}
	return true
}

// place maps a perturbed point to the config it is measured at, queueing it
// when it needs measuring; nil when no config can take it.
func (s *SPSA) place(th []float64, forced bool) genome.Config {
	c := s.round(th)
	if s.space.Valid(c) {
		if i := s.told(c); i >= 0 && !forced {
			return c
		}
		if !s.known(c) {
			s.enqueue(c)
			return c
		}
		if s.inQueue(c) {
			return c
		}
	}
	n := s.nearestUnknown(c)
	if n != nil {
		s.enqueue(n)
	}
	return n
}

func (s *SPSA) inQueue(c genome.Config) bool {
	return slices.ContainsFunc(s.st.Queue, c.Equal)
}

func (s *SPSA) enqueue(c genome.Config) {
	if !s.inQueue(c) {
		s.st.Queue = append(s.st.Queue, c)
	}
}

// nearestUnknown is the valid config closest to c by Distance that was
// neither asked nor told nor queued; ties go to the first in All order. On
// a space too large to list it is genome's bounded nearest search.
func (s *SPSA) nearestUnknown(c genome.Config) genome.Config {
	if !s.space.Enumerable() {
		n, _ := s.space.Nearest(nil, s.space.DistanceCost(c), func(a genome.Config) bool { return !s.st.Known(a) && !s.inQueue(a) })
		return n
	}
	all := s.space.All()
	best, bestD := -1, math.Inf(1)
	for i, a := range all {
		d := s.space.Distance(c, a)
		if d >= bestD {
			continue
		}
		if s.st.Known(a) || s.inQueue(a) {
			continue
		}
		best, bestD = i, d
	}
	if best < 0 {
		return nil
	}
	return all[best].Clone()
}

// resolve updates θ once every point of the open iteration is told.
func (s *SPSA) resolve(free bool) {
	maxLog := math.Inf(-1)
	for _, r := range s.st.Told {
		if r.OK {
			maxLog = max(maxLog, logTime(r.Value))
		}
	}
	if math.IsInf(maxLog, -1) {
		maxLog = 0
	}
	loss := func(c genome.Config) float64 {
		r := s.st.Told[s.told(c)]
		if !r.OK {
			return maxLog + 1
		}
		return logTime(r.Value)
	}
	ak, ck := s.gains()
	g := make([]float64, len(s.st.Theta))
	mean := 0.0
	for _, p := range s.st.Pairs {
		lp, lm := loss(p.Plus), loss(p.Minus)
		mean += (lp + lm) / 2
		for i := range g {
			g[i] += (lp - lm) / (2 * p.C[i]) * float64(p.Delta[i])
		}
	}
	m := float64(len(s.st.Pairs))
	mean /= m
	before := s.round(s.st.Theta)
	for i := range g {
		step := min(max(ak*g[i]/m, -maxStep), maxStep)
		s.st.Theta[i] = min(max(s.st.Theta[i]-step, 0), 1)
	}
	s.st.Pairs, s.st.Queue = nil, nil
	s.st.K++
	s.st.Iter++
	if free {
		s.st.Free++
	} else {
		s.st.Free = 0
	}
	after := s.round(s.st.Theta)
	if after.Equal(before) {
		s.st.Stale++
	} else {
		s.st.Stale = 0
	}
	rec := Record{Iter: s.st.Iter, Loss: mean, Config: s.space.Key(after), GainA: ak, GainC: ck, Free: free}
	if s.st.Stale >= s.opt.Patience && (s.opt.Restarts == 0 || s.opt.Restarts > 0 && s.st.Restarts < s.opt.Restarts) {
		s.restart(after)
		rec.Restart = true
	}
	rec.Theta = slices.Clone(s.st.Theta)
	s.st.Records = append(s.st.Records, rec)
}

// restart resets the gains and moves θ to the best config measured, or to
// a random unmeasured one when θ already sits on the best.
func (s *SPSA) restart(at genome.Config) {
	s.st.K, s.st.Stale = 0, 0
	s.st.Restarts++
	if b := s.best(); b >= 0 && !s.st.Told[b].Config.Equal(at) {
		s.st.Theta = s.relax(s.st.Told[b].Config)
		return
	}
	if c := s.sampleUnknown(); c != nil {
		s.st.Theta = s.relax(c)
	}
}

func logTime(v float64) float64 { return math.Log(max(v, 1e-300)) }

// sampleUnknown draws a valid config uniformly from those neither asked nor
// told nor queued; nil when none is left.
func (s *SPSA) sampleUnknown() genome.Config {
	free := func(c genome.Config) bool { return !s.known(c) && !s.inQueue(c) }
	return evolve.SampleUnseen(s.rng, s.space, s.st.Seen()+len(s.st.Queue), func(c genome.Config) bool { return !free(c) })
}

// Tell implements evolve.Strategy.
func (s *SPSA) Tell(results []evolve.Result) error {
	for _, r := range results {
		if !s.space.InRange(r.Config) {
			return fmt.Errorf("%w: %v", evolve.ErrBadResult, []int(r.Config))
		}
	}
	for _, r := range results {
		s.st.Tell(r)
	}
	if len(s.st.Pairs) > 0 && s.ready() {
		s.resolve(false)
	}
	return nil
}

// ready reports whether every point of the open iteration is told.
func (s *SPSA) ready() bool {
	for _, p := range s.st.Pairs {
		if s.told(p.Plus) < 0 || s.told(p.Minus) < 0 {
			return false
		}
	}
	return true
}

// MarshalBinary implements evolve.Strategy.
func (s *SPSA) MarshalBinary() ([]byte, error) {
	rng, err := s.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := s.st
	st.V, st.Kind, st.RNG = version, s.Name(), rng
	return json.Marshal(st)
}

// UnmarshalBinary implements evolve.Strategy. On error the strategy is
// unchanged.
func (s *SPSA) UnmarshalBinary(data []byte) error {
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: %w", evolve.ErrBadState, err)
	}
	if err := s.check(&st); err != nil {
		return fmt.Errorf("%w: %w", evolve.ErrBadState, err)
	}
	pcg := *s.pcg
	if err := pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("%w: rng: %w", evolve.ErrBadState, err)
	}
	*s.pcg = pcg
	st.RNG = nil
	s.st = st
	s.index()
	return nil
}

func (s *SPSA) check(st *state) error {
	if st.V != version || st.Kind != s.Name() {
		return fmt.Errorf("kind %q version %d, want %q version %d", st.Kind, st.V, s.Name(), version)
	}
	n := s.space.Len()
	if err := st.History.Check(s.space); err != nil {
		return err
	}
	for _, c := range st.Queue {
		if !s.space.InRange(c) {
			return fmt.Errorf("config %v not in space", []int(c))
		}
	}
	if st.Theta != nil && len(st.Theta) != n {
		return fmt.Errorf("theta has %d values, want %d", len(st.Theta), n)
	}
	for _, v := range st.Theta {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("theta value %v outside [0,1]", v)
		}
	}
	if len(st.Pairs) > 0 && st.Theta == nil {
		return fmt.Errorf("pairs without theta")
	}
	for i, p := range st.Pairs {
		if len(p.Delta) != n || len(p.C) != n || !s.space.InRange(p.Plus) || !s.space.InRange(p.Minus) {
			return fmt.Errorf("pair %d malformed", i)
		}
		for j := range n {
			if (p.Delta[j] != 1 && p.Delta[j] != -1) || !(p.C[j] > 0) {
				return fmt.Errorf("pair %d malformed", i)
			}
		}
	}
	if st.K < 0 || st.Iter < 0 || st.Stale < 0 || st.Free < 0 || st.Restarts < 0 {
		return fmt.Errorf("negative counter")
	}
	return nil
}

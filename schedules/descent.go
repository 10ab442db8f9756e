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

// DescentOptions tunes Descent. Zero values take the defaults documented in
// the package comment.
type DescentOptions struct {
	Init       int     // random configs measured before the first surrogate (default 8)
	Neighbours int     // measured configs nearest the anchor that the surrogate is fitted on (default 32)
	Steps      int     // gradient steps per descent (default 24)
	Starts     int     // descents per proposal: from the anchor and from random points of the region (default 3)
	A          float64 // first step, as a fraction of the trust radius (default 0.5)
	Stability  float64 // S in a_j = A·((S+1)/(S+j+1))^α (default 2)
	Alpha      float64 // step decay exponent α (default 0.602)
	Radius     float64 // trust radius at the start of a descent, in relaxed units (default 0.5)
	MinRadius  float64 // a descent whose radius falls below this restarts (default 0.06)
	Patience   int     // own proposals without improvement before the radius halves (default 2)

	// gradient scales the surrogate gradient descend follows: 0 (the
	// zero value) means 1; tests set it to ablateGradient (no gradient)
	// or -1 (reversed) to check the mechanism matters.
	gradient float64
}

// ablateGradient stands for a zeroed gradient in DescentOptions.gradient.
const ablateGradient = 1e-300

func (o *DescentOptions) defaults() {
	if o.Init <= 0 {
		o.Init = 8
	}
	if o.Neighbours <= 0 {
		o.Neighbours = 32
	}
	if o.Steps <= 0 {
		o.Steps = 24
	}
	if o.Starts <= 0 {
		o.Starts = 3
	}
	if o.A <= 0 {
		o.A = 0.5
	}
	if o.Stability <= 0 {
		o.Stability = 2
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.602
	}
	if o.Radius <= 0 || o.Radius > 1 {
		o.Radius = 0.5
	}
	if o.MinRadius <= 0 {
		o.MinRadius = 0.06
	}
	if o.Patience <= 0 {
		o.Patience = 2
	}
	switch o.gradient {
	case 0:
		o.gradient = 1
	case ablateGradient:
		o.gradient = 0
	}
}

// Step is one proposal of Descent, kept for inspection.
type Step struct {
	Iter      int       `json:"iter"`           // proposal number over the run
	Anchor    string    `json:"anchor"`         // key of the config the descent started from
	Radius    float64   `json:"radius"`         // trust radius used
	Theta     []float64 `json:"theta"`          // relaxed point the descent ended at
	Predicted float64   `json:"predicted"`      // surrogate loss at Theta
	FitRMSE   float64   `json:"fit_rmse"`       // leave-one-out error of the surrogate on its points
	Config    string    `json:"config"`         // key of the config proposed (Theta rounded)
	Loss      *float64  `json:"loss,omitempty"` // measured log time, once told and valid
	Failed    bool      `json:"failed,omitempty"`
	Restart   bool      `json:"restart,omitempty"`
}

// Descent is gradient descent on a smooth surrogate of the loss over the
// relaxed index space, inside a trust region around the best config of the
// current descent. See the package comment.
type Descent struct {
	space *genome.Space
	opt   DescentOptions
	pcg   *rand.PCG
	rng   *rand.Rand
	st    descentState

	mine   map[string]int // packed config of an untold own proposal -> index into Steps
	coords []float64      // relaxed coordinates of space.All(), row-major, built lazily
}

var _ evolve.Strategy = (*Descent)(nil)

type descentState struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	RNG  []byte `json:"rng"`
	evolve.History
	Epoch    int     `json:"epoch"`  // index into Told where the current descent began
	Radius   float64 `json:"radius"` // current trust radius
	Misses   int     `json:"misses"` // own proposals since the descent last improved
	Restarts int     `json:"restarts"`
	Steps    []Step  `json:"steps,omitempty"` // the newest MaxSteps, and every pending one
	Iters    int     `json:"iters,omitempty"` // proposals made: the Iter of the last step
}

// MaxSteps is how many resolved Step records a Descent keeps, the newest:
// its state is stored after every generation, and a long-lived job would
// otherwise carry every proposal it ever made. Steps still waiting for
// their result are kept whatever their age: their results adapt the
// radius.
const MaxSteps = 64

// NewDescent returns surrogate-gradient descent over space, seeded by seed.
// It panics on a nil space.
func NewDescent(space *genome.Space, seed uint64, opt DescentOptions) *Descent {
	if space == nil {
		panic("schedules: nil space")
	}
	opt.defaults()
	pcg := rand.NewPCG(seed, seed^0x2545f4914f6cdd1d)
	d := &Descent{space: space, opt: opt, pcg: pcg, rng: rand.New(pcg)}
	d.st.Radius = opt.Radius
	d.index()
	return d
}

// Withdraw implements evolve.Withdrawer: the step that proposed c goes
// too, so its result never adapts the radius.
func (d *Descent) Withdraw(c genome.Config) {
	if !d.st.Withdraw(c) {
		return
	}
	k := pack(c)
	si, own := d.mine[k]
	if !own {
		return
	}
	delete(d.mine, k)
	d.st.Steps = slices.Delete(d.st.Steps, si, si+1)
	for k, i := range d.mine {
		if i > si {
			d.mine[k] = i - 1
		}
	}
}

// Name implements evolve.Strategy.
func (d *Descent) Name() string { return "schedules" }

// Steps returns the newest proposals (see MaxSteps), oldest first. The
// caller must not modify them.
func (d *Descent) Steps() []Step { return d.st.Steps }

func (d *Descent) index() {
	d.st.Init()
	d.mine = map[string]int{}
	for i, s := range d.st.Steps {
		if s.Loss == nil && !s.Failed {
			if c, err := d.space.ParseKey(s.Config); err == nil {
				if d.st.Index(c) < 0 {
					d.mine[pack(c)] = i
				}
			}
		}
	}
}

// Ask implements evolve.Strategy.
func (d *Descent) Ask(n int) ([]genome.Config, error) {
	var out []genome.Config
	for range n {
		c := d.next()
		if c == nil {
			break
		}
		d.st.Ask(c)
		out = append(out, c)
	}
	return out, nil
}

func (d *Descent) sampleUnknown() genome.Config {
	return evolve.SampleUnseen(d.rng, d.space, d.st.Seen(), d.st.Known)
}

// next proposes one config: random ones until Init are known or while the
// current descent has no valid anchor, then a surrogate descent.
func (d *Descent) next() genome.Config {
	if len(d.st.Told)+len(d.st.Pending) < d.opt.Init {
		return d.sampleUnknown()
	}
	anchor := d.anchor()
	if anchor < 0 {
		return d.sampleUnknown()
	}
	loss := d.losses()
	pts := d.neighbours(anchor)
	m := fitSurrogate(d.space.Len(), pts, func(i int) []float64 { return d.relax(d.st.Told[i].Config) }, func(i int) float64 { return loss[i] })
	a := d.relax(d.st.Told[anchor].Config)
	r := d.st.Radius
	lo, hi := make([]float64, len(a)), make([]float64, len(a))
	for i := range a {
		lo[i], hi[i] = max(a[i]-r, 0), min(a[i]+r, 1)
	}
	var best []float64
	bestF := math.Inf(1)
	for s := range d.opt.Starts {
		th := slices.Clone(a)
		if s > 0 {
			for i := range th {
				th[i] = lo[i] + d.rng.Float64()*(hi[i]-lo[i])
			}
		}
		th, f := d.descend(m, th, lo, hi, r)
		if f < bestF {
			best, bestF = th, f
		}
	}
	c := d.nearestUnknown(best)
	if c == nil {
		return nil
	}
	d.st.Iters++
	step := Step{
		Iter: d.st.Iters, Anchor: d.space.Key(d.st.Told[anchor].Config), Radius: r,
		Theta: best, Predicted: finite(bestF), FitRMSE: finite(m.looRMSE()), Config: d.space.Key(c),
	}
	d.mine[pack(c)] = len(d.st.Steps)
	d.st.Steps = append(d.st.Steps, step)
	d.trimSteps()
	return c
}

// trimSteps drops the oldest resolved steps beyond MaxSteps and renumbers
// the index of pending ones.
func (d *Descent) trimSteps() {
	drop := len(d.st.Steps) - MaxSteps
	if drop <= 0 {
		return
	}
	pending := make(map[int]string, len(d.mine))
	for k, i := range d.mine {
		pending[i] = k
	}
	kept := make([]Step, 0, MaxSteps+len(pending))
	for i, s := range d.st.Steps {
		k, isPending := pending[i]
		if drop > 0 && !isPending {
			drop--
			continue
		}
		if isPending {
			d.mine[k] = len(kept)
		}
		kept = append(kept, s)
	}
	d.st.Steps = kept
}

// descend follows the surrogate's negative gradient from th within [lo,hi]
// with decaying steps, and returns the lowest point it passed.
func (d *Descent) descend(m *surrogate, th, lo, hi []float64, r float64) ([]float64, float64) {
	g := make([]float64, len(th))
	best, bestF := slices.Clone(th), m.eval(th, nil)
	for j := range d.opt.Steps {
		m.eval(th, g)
		for i := range g {
			g[i] *= d.opt.gradient
		}
		norm := 0.0
		for _, v := range g {
			norm += v * v
		}
		norm = math.Sqrt(norm)
		if norm < 1e-12 {
			break
		}
		a := d.opt.A * r * math.Pow((d.opt.Stability+1)/(d.opt.Stability+float64(j)+1), d.opt.Alpha)
		for i := range th {
			th[i] = min(max(th[i]-a*g[i]/norm, lo[i]), hi[i])
		}
		if f := m.eval(th, nil); f < bestF {
			best, bestF = slices.Clone(th), f
		}
	}
	return best, bestF
}

// anchor is the index in Told of the best valid result of the current
// descent, or -1 when it has none.
func (d *Descent) anchor() int {
	best := -1
	for i := d.st.Epoch; i < len(d.st.Told); i++ {
		r := d.st.Told[i]
		if r.OK && (best < 0 || r.Value < d.st.Told[best].Value) {
			best = i
		}
	}
	return best
}

// losses is log time per told result; a failure costs the largest log time
// seen plus one.
func (d *Descent) losses() []float64 {
	maxLog := math.Inf(-1)
	for _, r := range d.st.Told {
		if r.OK {
			maxLog = max(maxLog, logTime(r.Value))
		}
	}
	if math.IsInf(maxLog, -1) {
		maxLog = 0
	}
	out := make([]float64, len(d.st.Told))
	for i, r := range d.st.Told {
		if r.OK {
			out[i] = logTime(r.Value)
		} else {
			out[i] = maxLog + 1
		}
	}
	return out
}

// neighbours returns the indices in Told of the Neighbours results nearest
// the anchor in relaxed coordinates, the anchor first.
func (d *Descent) neighbours(anchor int) []int {
	a := d.relax(d.st.Told[anchor].Config)
	type cand struct {
		i int
		d float64
	}
	cs := make([]cand, len(d.st.Told))
	for i, r := range d.st.Told {
		cs[i] = cand{i, sqDist(a, d.relax(r.Config))}
	}
	slices.SortStableFunc(cs, func(x, y cand) int {
		switch {
		case x.d < y.d:
			return -1
		case x.d > y.d:
			return 1
		}
		return 0
	})
	out := make([]int, 0, d.opt.Neighbours)
	for _, c := range cs[:min(len(cs), d.opt.Neighbours)] {
		out = append(out, c.i)
	}
	return out
}

// finite keeps a record JSON-encodable: a non-finite figure becomes 0.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		x := a[i] - b[i]
		s += x * x
	}
	return s
}

func (d *Descent) relax(c genome.Config) []float64 {
	th := make([]float64, len(c))
	for i, p := range d.space.Params() {
		if n := len(p.Values); n > 1 {
			th[i] = float64(c[i]) / float64(n-1)
		}
	}
	return th
}

func (d *Descent) ensureCoords() {
	if d.coords != nil {
		return
	}
	all := d.space.All()
	n := d.space.Len()
	d.coords = make([]float64, 0, len(all)*n)
	for _, c := range all {
		d.coords = append(d.coords, d.relax(c)...)
	}
}

// nearestUnknown is the valid config nearest th (Euclidean, relaxed) that
// was neither asked nor told; ties go to the first in All order. On a space
// too large to list it is genome's bounded nearest search.
func (d *Descent) nearestUnknown(th []float64) genome.Config {
	if !d.space.Enumerable() {
		params := d.space.Params()
		cost := func(i, j int) float64 {
			x := th[i]
			if n := len(params[i].Values); n > 1 {
				x -= float64(j) / float64(n-1)
			}
			return x * x
		}
		c, _ := d.space.Nearest(nil, cost, func(c genome.Config) bool { return !d.st.Known(c) })
		return c
	}
	d.ensureCoords()
	all := d.space.All()
	n := len(th)
	best, bestD := -1, math.Inf(1)
	for i := range all {
		row := d.coords[i*n : (i+1)*n]
		s := 0.0
		for j, v := range row {
			x := v - th[j]
			s += x * x
			if s >= bestD {
				break
			}
		}
		if s >= bestD {
			continue
		}
		if d.st.Known(all[i]) {
			continue
		}
		best, bestD = i, s
	}
	if best < 0 {
		return nil
	}
	return all[best].Clone()
}

// Tell implements evolve.Strategy. A told own proposal moves the trust
// region: an improvement on the descent's best widens it, Patience misses
// in a row halve it, and a radius below MinRadius starts a new descent from
// the next random config.
func (d *Descent) Tell(results []evolve.Result) error {
	for _, r := range results {
		if !d.space.InRange(r.Config) {
			return fmt.Errorf("%w: %v", evolve.ErrBadResult, []int(r.Config))
		}
	}
	for _, r := range results {
		prev := d.anchor()
		if !d.st.Tell(r) {
			continue
		}
		r = d.st.Told[len(d.st.Told)-1]
		k := pack(r.Config)
		si, own := d.mine[k]
		if !own {
			continue
		}
		delete(d.mine, k)
		if r.OK {
			l := logTime(r.Value)
			d.st.Steps[si].Loss = &l
		} else {
			d.st.Steps[si].Failed = true
		}
		if r.OK && (prev < 0 || r.Value < d.st.Told[prev].Value) {
			d.st.Radius = min(d.st.Radius*1.5, 1)
			d.st.Misses = 0
			continue
		}
		d.st.Misses++
		if d.st.Misses >= d.opt.Patience {
			d.st.Radius /= 2
			d.st.Misses = 0
		}
		if d.st.Radius < d.opt.MinRadius {
			d.st.Epoch, d.st.Radius = len(d.st.Told), d.opt.Radius
			d.st.Restarts++
			d.st.Steps[si].Restart = true
		}
	}
	return nil
}

// MarshalBinary implements evolve.Strategy.
func (d *Descent) MarshalBinary() ([]byte, error) {
	rng, err := d.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := d.st
	st.V, st.Kind, st.RNG = version, "schedules-descent", rng
	return json.Marshal(st)
}

// UnmarshalBinary implements evolve.Strategy. On error the strategy is
// unchanged.
func (d *Descent) UnmarshalBinary(data []byte) error {
	var st descentState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: %w", evolve.ErrBadState, err)
	}
	if st.V != version || st.Kind != "schedules-descent" {
		return fmt.Errorf("%w: kind %q version %d, want %q version %d", evolve.ErrBadState, st.Kind, st.V, "schedules-descent", version)
	}
	if err := st.History.Check(d.space); err != nil {
		return err
	}
	if st.Epoch < 0 || st.Epoch > len(st.Told) || !(st.Radius > 0 && st.Radius <= 1) || st.Misses < 0 || st.Restarts < 0 {
		return fmt.Errorf("%w: epoch %d, radius %v, misses %d, restarts %d out of range", evolve.ErrBadState, st.Epoch, st.Radius, st.Misses, st.Restarts)
	}
	for i, s := range st.Steps {
		if len(s.Theta) != d.space.Len() {
			return fmt.Errorf("%w: step %d has %d coordinates, want %d", evolve.ErrBadState, i, len(s.Theta), d.space.Len())
		}
		st.Iters = max(st.Iters, s.Iter) // a state from before Iters kept every step
	}
	pcg := *d.pcg
	if err := pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("%w: rng: %w", evolve.ErrBadState, err)
	}
	*d.pcg = pcg
	st.RNG = nil
	d.st = st
	d.index()
	return nil
}

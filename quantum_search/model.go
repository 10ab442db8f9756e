package quantumsearch

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
)

// features lists the bits a config sets.
func (a *Annealer) features(c genome.Config, dst []int) []int {
	dst = dst[:0]
	for p, j := range c {
		dst = append(dst, a.bits[p][j]...)
	}
	return dst
}

// targets returns the normal scores of the told results (or their log
// times, Options.Targets), failed ones at the worst valid target + 1
// (evolve.FitTargets).
func (a *Annealer) targets() []float64 { return evolve.FitTargets(a.st.Told, a.opt.Targets) }

// maxActive is the most bits a config may set before fit shrinks its SGD
// step: above every recorded space in ../shared/spaces (45 at most), so
// their searches are as they were.
const maxActive = 64

// maxUpdates bounds the SGD sample updates of one fit.
const maxUpdates = 24000

// fit trains the factorization machine on every told result, warm-started
// from the previous weights when there are any. It returns the training
// RMSE in log time.
func (a *Annealer) fit() float64 {
	y := a.targets()
	n := len(y)
	mean, sd := 0.0, 0.0
	for _, v := range y {
		mean += v
	}
	mean /= float64(n)
	for _, v := range y {
		sd += (v - mean) * (v - mean)
	}
	sd = math.Sqrt(sd / float64(n))
	if !(sd > 1e-12) {
		sd = 1
	}
	epochs := a.opt.Refit
	m := a.st.Model
	if m == nil {
		m = &model{W: make([]float64, a.nbits), V: make([]float64, a.nbits*a.opt.Factors)}
		for i := range m.V {
			m.V[i] = 0.05 * a.rng.NormFloat64()
		}
		epochs = a.opt.Epochs
	} else {
		m = &model{W0: m.W0, W: slices.Clone(m.W), V: slices.Clone(m.V)}
	}
	m.Mean, m.Std = mean, sd
	// Bound the work of one fit so long runs keep a flat overhead.
	epochs = max(2, min(epochs, maxUpdates/n))
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	rmse := a.sgd(m, y, rows, epochs, true)
	a.st.Model = m
	a.st.Fitted = n
	a.st.FullFit = n
	return rmse
}

// Periodic refits: up to fullRefits results every Ask refits on all of
// them (fit); past that, a full refit waits until the history has grown by
// a tenth since the last one, and the Asks between update the model on the
// new results and a sample of older ones (update). A full fit costs up to
// maxUpdates sample updates, so its cost per evaluation falls as the
// history grows, and an update's is fixed.
const (
	fullRefits    = 400
	updateSamples = 32
)

// refitDue reports whether the next fit should be a full one.
func (a *Annealer) refitDue() bool {
	n := len(a.st.Told)
	return a.st.Model == nil || n <= fullRefits || n-a.st.FullFit >= n/10
}

// update trains the model, keeping its target scaling, for Refit epochs on
// the results told since the last fit and up to updateSamples earlier ones
// drawn at random, so it learns the new ones without forgetting.
func (a *Annealer) update() {
	y := a.targets()
	n := len(y)
	m := a.st.Model
	m = &model{W0: m.W0, W: slices.Clone(m.W), V: slices.Clone(m.V), Mean: m.Mean, Std: m.Std}
	var rows []int
	for i := a.st.Fitted; i < n; i++ {
		rows = append(rows, i)
	}
	for range min(updateSamples, a.st.Fitted) {
		rows = append(rows, a.rng.IntN(a.st.Fitted))
	}
	a.sgd(m, y, rows, a.opt.Refit, false)
	a.st.Model = m
	a.st.Fitted = n
}

// sgd runs epochs of SGD on the rows of y (log targets) into m, standardised
// by m's Mean and Std, and returns the training RMSE over those rows when
// rmse is set.
func (a *Annealer) sgd(m *model, y []float64, rows []int, epochs int, rmse bool) float64 {
	k := a.opt.Factors
	feats := make([][]int, len(rows))
	ys := make([]float64, len(rows))
	for x, i := range rows {
		feats[x] = a.features(a.st.Told[i].Config, nil)
		ys[x] = (y[i] - m.Mean) / m.Std
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	s := make([]float64, k)
	lr, l2 := a.opt.Rate, a.opt.L2
	for e := range epochs {
		// Decay the rate over the fit for a settled end point.
		eta := lr / (1 + 4*float64(e)/float64(epochs))
		a.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			f := feats[i]
			pred := m.predict(f, s, k)
			g := max(min(pred-ys[i], 3), -3)
			// A config that sets many bits moves many weights at once,
			// and the pairwise term grows with their square: past
			// maxActive the step shrinks by that square, or SGD diverges
			// (parameters of dozens of ordinal values).
			eta := eta
			if len(f) > maxActive {
				r := maxActive / float64(len(f))
				eta *= r * r
			}
			m.W0 -= eta * g
			for _, b := range f {
				m.W[b] -= eta * (g + l2*m.W[b])
				v := m.V[b*k : b*k+k]
				for q := range v {
					v[q] -= eta * (g*(s[q]-v[q]) + l2*v[q])
				}
			}
		}
	}
	if !rmse {
		return 0
	}
	se := 0.0
	for i, f := range feats {
		d := (m.predict(f, s, k) - ys[i]) * m.Std
		se += d * d
	}
	return math.Sqrt(se / float64(len(feats)))
}

// predict returns the standardised prediction for the bits f, leaving the
// factor sums in s.
func (m *model) predict(f []int, s []float64, k int) float64 {
	clear(s)
	out := m.W0
	sq := 0.0
	for _, b := range f {
		out += m.W[b]
		v := m.V[b*k : b*k+k]
		for q, x := range v {
			s[q] += x
			sq += x * x
		}
	}
	inter := 0.0
	for _, x := range s {
		inter += x * x
	}
	return out + 0.5*(inter-sq)
}

// qubo is the fitted machine folded per parameter value: the energy of a
// config is W0 + Σ_p Lin[p][j] + ½(|Σ_p S[p][j]|² − Σ_p Q[p][j]), so
// changing one parameter costs O(factors).
type qubo struct {
	w0  float64
	lin [][]float64
	s   [][][]float64
	q   [][]float64
	k   int
}

func (a *Annealer) qubo() *qubo {
	m, k := a.st.Model, a.opt.Factors
	qb := &qubo{w0: m.W0, k: k, lin: make([][]float64, len(a.bits)), s: make([][][]float64, len(a.bits)), q: make([][]float64, len(a.bits))}
	for p, vals := range a.bits {
		qb.lin[p] = make([]float64, len(vals))
		qb.s[p] = make([][]float64, len(vals))
		qb.q[p] = make([]float64, len(vals))
		for j, f := range vals {
			sv := make([]float64, k)
			for _, b := range f {
				qb.lin[p][j] += m.W[b]
				for q, x := range m.V[b*k : b*k+k] {
					sv[q] += x
					qb.q[p][j] += x * x
				}
			}
			qb.s[p][j] = sv
			if a.opt.uncoupled {
				clear(sv)
				qb.q[p][j] = 0
			}
		}
	}
	return qb
}

// chain is the running state of one annealing chain.
type chain struct {
	c        genome.Config
	lin, sqn float64
	s        []float64
}

func (qb *qubo) start(c genome.Config) *chain {
	ch := &chain{c: c.Clone(), s: make([]float64, qb.k)}
	for p, j := range c {
		ch.lin += qb.lin[p][j]
		ch.sqn += qb.q[p][j]
		for q, x := range qb.s[p][j] {
			ch.s[q] += x
		}
	}
	return ch
}

func (qb *qubo) energy(ch *chain) float64 {
	inter := 0.0
	for _, x := range ch.s {
		inter += x * x
	}
	return qb.w0 + ch.lin + 0.5*(inter-ch.sqn)
}

// delta is the energy change of setting parameter p to value j.
func (qb *qubo) delta(ch *chain, p, j int) float64 {
	i := ch.c[p]
	d := qb.lin[p][j] - qb.lin[p][i] - 0.5*(qb.q[p][j]-qb.q[p][i])
	so, sn := qb.s[p][i], qb.s[p][j]
	for q, x := range ch.s {
		y := x - so[q] + sn[q]
		d += 0.5 * (y*y - x*x)
	}
	return d
}

func (qb *qubo) move(ch *chain, p, j int) {
	i := ch.c[p]
	ch.lin += qb.lin[p][j] - qb.lin[p][i]
	ch.sqn += qb.q[p][j] - qb.q[p][i]
	for q := range ch.s {
		ch.s[q] += qb.s[p][j][q] - qb.s[p][i][q]
	}
	ch.c[p] = j
}

type candidate struct {
	c      genome.Config
	key    string
	energy float64
}

// anneal fits the model if new results came in and returns up to n
// distinct, valid, unseen configs of lowest energy found by annealing.
func (a *Annealer) anneal(n int) []genome.Config {
	step := Step{Told: len(a.st.Told)}
	switch {
	case a.st.Model == nil || (a.st.Fitted != len(a.st.Told) && a.refitDue()):
		step.RMSE = a.fit()
	case a.st.Fitted != len(a.st.Told):
		a.update()
		fallthrough
	default:
		if len(a.st.Steps) > 0 {
			step.RMSE = a.st.Steps[len(a.st.Steps)-1].RMSE
		}
	}
	qb := a.qubo()
	var all []genome.Config
	if a.listed {
		all = a.space.All()
		if len(all) == 0 {
			return nil
		}
	}
	if len(a.mutable) == 0 {
		return nil
	}
	// Starting points: the best measured valid configs, then random ones.
	var best []int
	for i, r := range a.st.Told {
		if r.OK && a.isValid(r.Config) {
			best = append(best, i)
		}
	}
	slices.SortStableFunc(best, func(x, y int) int { return cmpFloat(a.st.Told[x].Value, a.st.Told[y].Value) })
	cands := map[string]candidate{}
	bestE := math.Inf(1)
	// note records a chain's config as a candidate when it is unknown.
	note := func(st *chain, e float64) {
		bestE = min(bestE, e)
		if a.known(st.c) {
			return
		}
		key := string(a.buf)
		if old, ok := cands[key]; !ok || e < old.energy {
			cands[key] = candidate{c: st.c.Clone(), key: key, energy: e}
		}
	}
	chains := make([]*chain, a.opt.Batch)
	energies := make([]float64, a.opt.Batch)
	for ch := range a.opt.Batch {
		var c genome.Config
		switch {
		case ch%2 == 0 && ch/2 < len(best):
			c = a.st.Told[best[ch/2]].Config
		case a.listed:
			c = all[a.rng.IntN(len(all))]
		default:
			var err error
			if c, err = a.space.Sample(a.rng); err != nil {
				return nil
			}
		}
		chains[ch] = qb.start(c)
		energies[ch] = qb.energy(chains[ch])
		note(chains[ch], energies[ch])
		if !a.opt.Tempering {
			a.cool(qb, chains[ch], &energies[ch], note)
		}
	}
	if a.opt.Tempering {
		a.temper(qb, chains, energies, note)
	}
	list := make([]candidate, 0, len(cands))
	for _, c := range cands {
		list = append(list, c)
	}
	slices.SortFunc(list, func(x, y candidate) int {
		if c := cmpFloat(x.energy, y.energy); c != 0 {
			return c
		}
		return strings.Compare(x.key, y.key)
	})
	m := a.st.Model
	step.BestEnergy = m.Mean + m.Std*bestE
	if math.IsInf(bestE, 1) {
		step.BestEnergy = 0 // JSON has no infinity; Candidates is 0 then
	}
	step.Sweeps = a.opt.Sweeps * a.opt.Batch
	step.Candidates = len(list)
	a.st.Steps = append(a.st.Steps, step)
	if n := len(a.st.Steps); n > MaxSteps {
		a.st.Steps = slices.Clone(a.st.Steps[n-MaxSteps:])
	}
	var out []genome.Config
	for _, c := range list[:min(n, len(list))] {
		out = append(out, c.c)
	}
	return out
}

// cool anneals one chain: Sweeps moves per mutable parameter, the
// temperature falling geometrically from t0 to t1.
func (a *Annealer) cool(qb *qubo, st *chain, e *float64, note func(*chain, float64)) {
	moves := a.opt.Sweeps * len(a.mutable)
	cool := math.Pow(t1/t0, 1/float64(max(moves-1, 1)))
	temp := t0
	for range moves {
		temp *= cool
		a.try(qb, st, e, temp, note)
	}
}

// temper is replica exchange: each chain stays at its own temperature of
// a geometric ladder from t0 (the first chain) to t1 (the last), all make
// a sweep, then neighbours on the ladder swap configs with the Metropolis
// probability, so a state found hot can cool and one stuck cold can heat.
// It makes as many moves as cooling each chain would.
func (a *Annealer) temper(qb *qubo, chains []*chain, e []float64, note func(*chain, float64)) {
	n := len(chains)
	temps := make([]float64, n)
	for i := range temps {
		temps[i] = t0 * math.Pow(t1/t0, float64(i)/float64(max(n-1, 1)))
	}
	for range a.opt.Sweeps {
		for i, st := range chains {
			for range len(a.mutable) {
				a.try(qb, st, &e[i], temps[i], note)
			}
		}
		exchange(a.rng, temps, chains, e)
	}
}

// exchange offers each pair of neighbours on the temperature ladder a swap
// of their states, taken with probability min(1, exp((1/T_i - 1/T_j)(E_i -
// E_j))): always when the hotter holds the lower energy. It returns the
// swaps made.
func exchange(rng *rand.Rand, temps []float64, chains []*chain, e []float64) int {
	swaps := 0
	for i := 0; i+1 < len(chains); i++ {
		x := (1/temps[i] - 1/temps[i+1]) * (e[i] - e[i+1])
		if x >= 0 || rng.Float64() < math.Exp(x) {
			chains[i], chains[i+1] = chains[i+1], chains[i]
			e[i], e[i+1] = e[i+1], e[i]
			swaps++
		}
	}
	return swaps
}

// try proposes one move of st at temperature temp, a neighbouring or a
// random value of a random parameter, and takes it by Metropolis.
func (a *Annealer) try(qb *qubo, st *chain, e *float64, temp float64, note func(*chain, float64)) {
	params := a.space.Params()
	p := a.mutable[a.rng.IntN(len(a.mutable))]
	nv := len(params[p].Values)
	var j int
	if a.rng.IntN(2) == 0 {
		j = st.c[p] + 1 - 2*a.rng.IntN(2)
		if j < 0 || j >= nv {
			j = st.c[p] - (j - st.c[p])
		}
	} else {
		j = a.rng.IntN(nv - 1)
		if j >= st.c[p] {
			j++
		}
	}
	old := st.c[p]
	st.c[p] = j
	ok := a.isValid(st.c)
	st.c[p] = old
	if !ok {
		return
	}
	d := qb.delta(st, p, j)
	if d > 0 && a.rng.Float64() >= math.Exp(-d/temp) {
		return
	}
	qb.move(st, p, j)
	*e += d
	note(st, *e)
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

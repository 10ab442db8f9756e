package builtin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// verifyDef is what Verify needs to know about a kernel beyond its reference.
type verifyDef struct {
	// large is the nominal factor the "large" case scales the inputs by;
	// factors is how many scaled inputs each output term multiplies (1 for
	// a sum, 2 for a product of A and B), so outputs scale by large^factors.
	large   float64
	factors int
	// ragged returns the dims of the ragged case: the tiled dims replaced by
	// prime(d), primes being multiples of no tile.
	ragged func(d []int, prime func(int) int) []int
	// refAbs returns the float64 reference and, per output element, the sum
	// of the magnitudes of its terms (Σ|a_i| for reduce, Σ|a_il||b_lj| for
	// sgemm), the scale of the rounding error bounds.
	refAbs func(d []int, in Inputs) (ref, abs []float64)
	// bound returns the a-priori error model of config v at dims d on
	// inputs in (a reduced-precision input's error depends on the scales
	// it is stored with).
	bound func(v map[string]genome.Value, d []int, in Inputs) errorModel
	// cols is the width of the output's rows, for messages; 0 for a vector.
	cols func(d []int) int
}

// errorModel is an a-priori forward error bound.
type errorModel struct {
	formula string
	// bound is the bound on |got - ref| for one output element, the
	// config's own error plus the reference's, given the reference value and
	// the sum of the magnitudes of the element's terms.
	bound func(ref, abs float64) float64
	// stages splits bound into the stages' shares; nil for a kernel whose
	// only stage is its float32 accumulation.
	stages func(ref, abs float64) []evaluate.StageBound
}

// largeCap bounds the magnitude of the outputs of the "large" case, well
// inside float32's range (3.4e38), so no partial sum can overflow.
const largeCap = 1e36

// minNormal32 is the smallest normal float32, the floor of the relative
// error's denominator.
const minNormal32 = 0x1p-126

// Verify checks config c of problem p: parity of its output with the float64
// reference on seeded random inputs and on edge cases, bitwise determinism
// over repeats, the measured error against an a-priori bound for its
// accumulation order, and, for a config that passed those, its latency
// distribution. A kernel that panics gives a report with Parity.Passed false
// and the panic in Parity.Worst. The error is for a bad problem, a config
// outside the space (wrapping evaluate.ErrNotInSpace), invalid settings, or a
// cancelled ctx (ctx.Err(), checked between runs).
func (k *Kernel) Verify(ctx context.Context, c genome.Config, p evaluate.Problem, s evaluate.VerifySettings) (evaluate.VerifyReport, error) {
	gen := k.def.newInputs
	if s.Inputs == evaluate.InputsPositive {
		gen = func(d []int, seed uint64) Inputs { return absInputs(k.def.newInputs(d, seed)) }
	}
	return k.verify(ctx, c, p, s, gen)
}

// inputGen makes the inputs of dims d from a seed.
type inputGen func(d []int, seed uint64) Inputs

// verify is Verify with the random inputs made by gen.
func (k *Kernel) verify(ctx context.Context, c genome.Config, p evaluate.Problem, s evaluate.VerifySettings, gen inputGen) (evaluate.VerifyReport, error) {
	start := time.Now()
	sp, err := k.space(p)
	if err != nil {
		return evaluate.VerifyReport{}, fmt.Errorf("verify %s: %w", k.def.name, err)
	}
	if err := checkConfig(sp, c); err != nil {
		return evaluate.VerifyReport{}, fmt.Errorf("verify %s: %w", k.def.name, err)
	}
	if err := s.Validate(); err != nil {
		return evaluate.VerifyReport{}, fmt.Errorf("verify %s: %w", k.def.name, err)
	}
	if err := ctx.Err(); err != nil {
		return evaluate.VerifyReport{}, err
	}
	v := &verification{k: k, ctx: ctx, c: c, vals: sp.Map(c), s: s.WithDefaults(), gen: gen, stop: new(atomic.Bool)}
	defer context.AfterFunc(ctx, func() { v.stop.Store(true) })()
	rep, err := v.run(p.Dims)
	if err != nil {
		return evaluate.VerifyReport{}, err
	}
	rep.CostS = time.Since(start).Seconds()
	return rep, nil
}

// verification is the state of one Verify call.
type verification struct {
	k    *Kernel
	ctx  context.Context
	stop *atomic.Bool // set once ctx is done: runs and references stop early
	c    genome.Config
	vals map[string]genome.Value
	s    evaluate.VerifySettings
	gen  inputGen

	par    parityAcc
	bound  boundAcc
	budget budgetAcc
}

// vcase is one parity case.
type vcase struct {
	name     string
	dims     []int
	in       Inputs
	outScale float64 // factor the outputs are scaled by, which scales an abs tolerance
}

// prepared is a config's runner for one problem.
type prepared struct {
	run runner
	n   int // output length
}

// errKernel marks a failure of the kernel itself (a panic), as opposed to
// one of the harness.
type errKernel struct{ err error }

func (e errKernel) Error() string { return e.err.Error() }
func (e errKernel) Unwrap() error { return e.err }

func (v *verification) prepare(d []int) (*prepared, error) {
	pr := &prepared{}
	_, _, pr.n = v.k.def.sizes(d)
	if err := protect(func() { pr.run = v.k.def.prepare(v.vals, d) }); err != nil {
		return nil, errKernel{err}
	}
	return pr, nil
}

// once runs pr on in into a new output, after checking ctx.
func (v *verification) once(pr *prepared, in Inputs) ([]float32, error) {
	if err := v.ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]float32, pr.n)
	in.stop = v.stop
	err := protect(func() { pr.run(in, out) })
	if cerr := v.ctx.Err(); cerr != nil {
		return nil, cerr // the run was cut short
	}
	if err != nil {
		return nil, errKernel{err}
	}
	return out, nil
}

func (v *verification) run(dims []int) (evaluate.VerifyReport, error) {
	var rep evaluate.VerifyReport
	v.par = parityAcc{tol: v.s.Tolerance, value: v.s.Value}
	v.bound = boundAcc{}
	v.budget = budgetAcc{b: v.s.Budget}
	rep.Determinism = evaluate.DeterminismResult{Policy: v.s.Nondeterministic}

	// fail ends verification at a kernel failure: parity fails with the
	// panic, and the checks not yet made fail too.
	fail := func(where string, err error) (evaluate.VerifyReport, error) {
		var ke errKernel
		if !errors.As(err, &ke) {
			return evaluate.VerifyReport{}, err // ctx
		}
		rep.Parity = v.par.result()
		rep.Parity.Passed = false
		rep.Parity.Worst = fmt.Sprintf("%s: %v", where, ke.err)
		rep.Determinism.Passed = false
		rep.ErrorBound = v.bound.result()
		rep.ErrorBound.Passed = false
		if rep.ErrorBound.Formula == "" {
			rep.ErrorBound.Formula = "not checked: the kernel failed"
		}
		rep.Budget = v.budget.result(v.vals, v.k.def.precision)
		rep.Budget.Passed = false
		return rep, nil
	}

	main, err := v.prepare(dims)
	if err != nil {
		return fail("prepare", err)
	}
	seeds := v.s.Seeds
	first := vcase{name: fmt.Sprintf("seed=%d", seeds[0]), dims: dims, in: v.gen(dims, seeds[0]), outScale: 1}
	firstOut, firstAbs, err := v.check(main, first)
	if err != nil {
		return fail(first.name, err)
	}

	// Determinism: the first case's run and Repeats-1 more on its inputs.
	det := &rep.Determinism
	det.Runs, det.Identical = 1, true
	for range v.s.Repeats - 1 {
		out, err := v.once(main, first.in)
		if err != nil {
			return fail("determinism", err)
		}
		det.Runs++
		for i := range out {
			if math.Float32bits(out[i]) != math.Float32bits(firstOut[i]) {
				det.Identical = false
				d := math.Abs(float64(out[i]) - float64(firstOut[i]))
				if math.IsNaN(d) {
					d = math.Inf(1)
				}
				det.MaxSpread = max(det.MaxSpread, d)
			}
		}
	}
	det.Passed = det.Identical || det.Policy == evaluate.PolicyCertify

	for _, seed := range seeds[1:] {
		cs := vcase{name: fmt.Sprintf("seed=%d", seed), dims: dims, in: v.gen(dims, seed), outScale: 1}
		if _, _, err := v.check(main, cs); err != nil {
			return fail(cs.name, err)
		}
	}

	na, nb, _ := v.k.def.sizes(dims)
	zeros := vcase{name: "zeros", dims: dims, in: Inputs{A: make([]float32, na)}, outScale: 1}
	if nb > 0 {
		zeros.in.B = make([]float32, nb)
	}
	if _, _, err := v.check(main, zeros); err != nil {
		return fail(zeros.name, err)
	}

	if large, ok := v.largeCase(first, firstAbs); ok {
		if _, _, err := v.check(main, large); err != nil {
			return fail(large.name, err)
		}
	}

	rdims, note := v.raggedDims(dims)
	if rdims == nil {
		v.par.cases = append(v.par.cases, note)
	} else {
		rp, err := v.prepare(rdims)
		if err != nil {
			return fail("prepare ragged", err)
		}
		cs := vcase{name: "ragged " + joinDims(rdims), dims: rdims, in: v.gen(rdims, seeds[0]), outScale: 1}
		if _, _, err := v.check(rp, cs); err != nil {
			return fail(cs.name, err)
		}
	}

	rep.Parity = v.par.result()
	rep.ErrorBound = v.bound.result()
	rep.Budget = v.budget.result(v.vals, v.k.def.precision)
	return rep, nil
}

// check runs one case, compares it with the reference and the error bound,
// and returns the output and the per-element magnitude sums.
func (v *verification) check(pr *prepared, cs vcase) ([]float32, []float64, error) {
	out, err := v.once(pr, cs.in)
	if err != nil {
		return nil, nil, err
	}
	ref, abs := v.reference(cs)
	if err := v.ctx.Err(); err != nil {
		return nil, nil, err
	}
	cols := 0
	if v.k.def.verify.cols != nil {
		cols = v.k.def.verify.cols(cs.dims)
	}
	v.par.cases = append(v.par.cases, cs.name)
	v.par.add(cs, out, ref, cols)
	if v.k.def.verify.bound != nil {
		m := v.k.def.verify.bound(v.vals, cs.dims, cs.in)
		v.bound.add(cs, out, ref, abs, m, cols)
		v.budget.add(cs, out, ref, abs, m, cols)
	} else {
		v.bound.noModel = true
		v.budget.noModel = true
	}
	return out, abs, nil
}

// reference returns the reference of a case and its magnitude sums (nil
// when the kernel has no refAbs).
func (v *verification) reference(cs vcase) ([]float64, []float64) {
	cs.in.stop = v.stop
	if f := v.k.def.verify.refAbs; f != nil {
		return f(cs.dims, cs.in)
	}
	return v.k.def.ref(cs.dims, cs.in), nil
}

// largeCase scales the first case's inputs by the kernel's large factor,
// capped so that no output's terms can sum past largeCap.
func (v *verification) largeCase(first vcase, abs []float64) (vcase, bool) {
	vd := v.k.def.verify
	if vd.large == 0 || vd.factors == 0 {
		return vcase{}, false
	}
	absMax := 0.0
	for _, x := range abs {
		absMax = max(absMax, x)
	}
	s := vd.large
	if absMax > 0 {
		s = min(s, math.Pow(largeCap/absMax, 1/float64(vd.factors)))
	}
	scale := func(x []float32) []float32 {
		if x == nil {
			return nil
		}
		out := make([]float32, len(x))
		for i, a := range x {
			out[i] = float32(float64(a) * s)
		}
		return out
	}
	return vcase{
		name:     fmt.Sprintf("large x%.3g", s),
		dims:     first.dims,
		in:       Inputs{A: scale(first.in.A), B: scale(first.in.B)},
		outScale: math.Pow(s, float64(vd.factors)),
	}, true
}

// raggedDims returns the dims of the ragged case, whose tiled dims are
// primes (multiples of no tile): a prime near half of each dim, else the
// next prime above it, whichever the config is valid on first. Nil and a
// note when there is none.
func (v *verification) raggedDims(d []int) ([]int, string) {
	rag := v.k.def.verify.ragged
	if rag == nil {
		return nil, "ragged: skipped, no ragged problem for this kernel"
	}
	half := func(x int) int { return nextPrime(max(2, (x+1)/2)) }
	above := func(x int) int { return nextPrime(x + 1) }
	var tried []string
	for _, f := range []func(int) int{half, above} {
		rd := rag(slices.Clone(d), f)
		if slices.Equal(rd, d) {
			continue
		}
		tried = append(tried, joinDims(rd))
		p := evaluate.Problem{Dims: rd}
		s, err := v.k.space(p)
		if err != nil {
			continue
		}
		if s.Check(v.c) == nil {
			return rd, ""
		}
	}
	if len(tried) == 0 {
		return nil, "ragged: skipped, the problem is too small to cut"
	}
	return nil, fmt.Sprintf("ragged: skipped, config not valid on %s", strings.Join(tried, " or "))
}

// nextPrime is the smallest prime >= x, for x >= 2.
func nextPrime(x int) int {
	for p := max(x, 2); ; p++ {
		if isPrime(p) {
			return p
		}
	}
}

func isPrime(p int) bool {
	if p < 2 {
		return false
	}
	for q := 2; q*q <= p; q++ {
		if p%q == 0 {
			return false
		}
	}
	return true
}

func joinDims(d []int) string {
	parts := make([]string, len(d))
	for i, x := range d {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, "x")
}

// where names element i of a case: its index, and row and column for a
// matrix output.
func where(name string, i, cols int) string {
	if cols > 0 {
		return fmt.Sprintf("%s [%d] (row %d, col %d)", name, i, i/cols, i%cols)
	}
	return fmt.Sprintf("%s [%d]", name, i)
}

// parityAcc accumulates the parity comparison over cases.
type parityAcc struct {
	tol   string
	value float64

	cases                  []string
	maxAbs, maxRel, maxULP float64
	worst                  string
	worstRatio             float64 // max over elements of error / what the tolerance allows
	failed                 bool
}

func (a *parityAcc) add(cs vcase, got []float32, want []float64, cols int) {
	if len(got) != len(want) {
		a.failed = true
		a.worst = fmt.Sprintf("%s: %d outputs, want %d", cs.name, len(got), len(want))
		a.worstRatio = math.Inf(1)
		return
	}
	scale := 0.0
	for _, w := range want {
		scale += math.Abs(w)
	}
	if len(want) > 0 {
		scale /= float64(len(want))
	}
	for i, g32 := range got {
		g, w := float64(g32), want[i]
		e := math.Abs(g - w)
		if math.IsNaN(e) {
			e = math.Inf(1)
		}
		den := max(math.Abs(w), scale, minNormal32)
		rel := e / den
		ulp := ulpDist(g32, float32(w))
		a.maxAbs = max(a.maxAbs, e/cs.outScale)
		a.maxRel = max(a.maxRel, rel)
		a.maxULP = max(a.maxULP, ulp)

		var ratio float64
		switch a.tol {
		case evaluate.ToleranceAbs:
			ratio = over(e/cs.outScale, a.value)
		case evaluate.ToleranceULP:
			ratio = over(ulp, a.value)
		default:
			ratio = over(e, a.value*max(math.Abs(w), scale))
		}
		if ratio > 1 {
			a.failed = true
		}
		if ratio > a.worstRatio || a.worst == "" {
			a.worstRatio = ratio
			a.worst = fmt.Sprintf("%s: got %g, want %g (%s)", where(cs.name, i, cols), g32, w, a.allowed(e, rel, ulp, cs.outScale))
		}
	}
}

// allowed describes an element's error next to what the tolerance allows.
func (a *parityAcc) allowed(e, rel, ulp, outScale float64) string {
	switch a.tol {
	case evaluate.ToleranceAbs:
		s := fmt.Sprintf("abs err %.3g, allowed %.3g", e/outScale, a.value)
		if outScale != 1 {
			s += fmt.Sprintf(", both in units of the x%.3g output scale", outScale)
		}
		return s
	case evaluate.ToleranceULP:
		return fmt.Sprintf("%.0f ulp, allowed %g", ulp, a.value)
	}
	return fmt.Sprintf("rel err %.3g, allowed %.3g", rel, a.value)
}

func (a *parityAcc) result() evaluate.ParityResult {
	return evaluate.ParityResult{
		Cases:     slices.Clone(a.cases),
		MaxAbsErr: a.maxAbs,
		MaxRelErr: a.maxRel,
		MaxULP:    a.maxULP,
		Tolerance: a.tol,
		Value:     a.value,
		Worst:     a.worst,
		Passed:    !a.failed && len(a.cases) > 0,
	}
}

// over is x/lim, the fraction of the limit used: 0 for x = 0 and +Inf past a
// zero limit.
func over(x, lim float64) float64 {
	switch {
	case x == 0:
		return 0
	case lim == 0:
		return math.Inf(1)
	}
	return x / lim
}

// ulpDist is the number of float32 values between a and b (0 when equal),
// +Inf when either is NaN or only one is infinite.
func ulpDist(a, b float32) float64 {
	if a != a || b != b {
		return math.Inf(1)
	}
	if math.IsInf(float64(a), 0) != math.IsInf(float64(b), 0) {
		return math.Inf(1)
	}
	return math.Abs(float64(ordered32(a) - ordered32(b)))
}

// ordered32 maps float32 bits to integers in the order of the values, with
// +0 and -0 both 0.
func ordered32(x float32) int64 {
	b := math.Float32bits(x)
	if b&(1<<31) != 0 {
		return -int64(b &^ (1 << 31))
	}
	return int64(b)
}

// boundAcc accumulates the error-bound check over cases.
type boundAcc struct {
	noModel  bool
	any      bool
	formula  string
	at       string
	bound    float64
	measured float64
	ratio    float64
}

func (a *boundAcc) add(cs vcase, got []float32, ref, abs []float64, m errorModel, cols int) {
	if len(got) != len(ref) || len(abs) != len(ref) {
		a.any = true
		a.ratio = math.Inf(1)
		a.formula, a.at = m.formula, cs.name+": output length differs from the reference"
		return
	}
	for i, g := range got {
		b := m.bound(ref[i], abs[i])
		e := math.Abs(float64(g) - ref[i])
		if math.IsNaN(e) {
			e = math.Inf(1)
		}
		r := over(e, b)
		if !a.any || r > a.ratio {
			a.any = true
			a.ratio, a.bound, a.measured = r, b, e
			a.formula, a.at = m.formula, where(cs.name, i, cols)
		}
	}
}

func (a *boundAcc) result() evaluate.ErrorBoundResult {
	if a.noModel {
		return evaluate.ErrorBoundResult{Formula: "no a-priori error bound for this kernel"}
	}
	if !a.any {
		return evaluate.ErrorBoundResult{}
	}
	return evaluate.ErrorBoundResult{
		Formula:  fmt.Sprintf("%s; worst element %s", a.formula, a.at),
		Bound:    a.bound,
		Measured: a.measured,
		Ratio:    a.ratio,
		Passed:   a.ratio <= 1,
	}
}

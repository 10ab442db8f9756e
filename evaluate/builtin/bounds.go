package builtin

import (
	"fmt"
	"math"
	"math/bits"
	goruntime "runtime"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// The error models follow Higham, Accuracy and Stability of Numerical
// Algorithms (2nd ed.), chapters 3 and 4: with unit roundoff u and
// γ_k = k·u/(1-k·u), a sum evaluated as any tree of additions in which no
// term passes through more than d roundings (additions, and the product
// that made it) satisfies |ŝ - s| <= γ_d·Σ|terms|. Adding an exact zero (the
// first addition into a cleared accumulator) does not round and is not
// counted. A fused multiply-add only removes roundings, so the bounds hold
// whether or not the compiler fuses.

const (
	u32 = 0x1p-24 // unit roundoff of float32
	u64 = 0x1p-53 // unit roundoff of float64
)

// gamma is γ_k = k·u/(1-k·u); +Inf once k·u >= 1, where it bounds nothing.
func gamma(k int, u float64) float64 {
	ku := float64(k) * u
	if ku >= 1 {
		return math.Inf(1)
	}
	return ku / (1 - ku)
}

// log2 is the base-2 logarithm of a power of two: the depth of the tree
// that combines that many partial sums.
func log2(x int) int { return bits.Len(uint(x)) - 1 }

func sgemmVerify() verifyDef {
	return verifyDef{
		large:   1e15,
		factors: 2,
		ragged: func(d []int, prime func(int) int) []int {
			return []int{prime(d[0]), prime(d[1]), prime(d[2])}
		},
		refAbs: refAbsSgemm,
		bound:  boundSgemm,
		cols:   func(d []int) int { return d[1] },
	}
}

// refAbsSgemm is refSgemm, and Σ_l |a_il||b_lj| per element. Rows are
// shared among GOMAXPROCS goroutines; each element is summed in the same
// order whatever the split.
func refAbsSgemm(d []int, in Inputs) ([]float64, []float64) {
	m, n, k := d[0], d[1], d[2]
	c := make([]float64, m*n)
	ca := make([]float64, m*n)
	byRows(in, m, func(i int) {
		crow := c[i*n : i*n+n]
		carow := ca[i*n : i*n+n]
		for p := range k {
			a := float64(in.A[i*k+p])
			aa := math.Abs(a)
			brow := in.B[p*n : p*n+n]
			crow, carow := crow[:len(brow)], carow[:len(brow)]
			for j, b := range brow {
				crow[j] += a * float64(b)
				carow[j] += aa * math.Abs(float64(b))
			}
		}
	})
	return c, ca
}

// byRows calls fn(0), ..., fn(rows-1), the rows shared among up to
// GOMAXPROCS goroutines; once in is stopped it calls fn no more.
func byRows(in Inputs, rows int, fn func(i int)) {
	w := max(1, min(goruntime.GOMAXPROCS(0), rows))
	parallel(w, func(wk int) {
		for i := wk; i < rows && !in.stopped(); i += w {
			fn(i)
		}
	})
}

// boundSgemm bounds each C element, a length-k dot product in float32. Its
// products are exact in the float64 reference, whose k-1 additions add
// γ64_k·Σ|a||b| at most.
//
// ijk, jik: per k-block of L <= tile_k values, unroll U partial sums each
// take floor(L/U) products (the first added to zero), the L mod U <= U-1
// leftovers go into the first, and a tree of depth log2 U combines them;
// the block's dot product is then added into C (cleared, so the first
// block's addition is exact). The deepest product passes through
// d = 1 + (floor(L/U)-1) + (U-1) + log2 U + (ceil(k/tile_k)-1) roundings.
//
// ikj: per k-block, each group of U products is summed by a tree of depth
// log2 U and added into the C element, and each leftover product is added
// alone; over all k-blocks that is A = Σ_blocks floor(L/U) + L mod U
// additions into C, the first exact: d = 1 + log2 U + (A-1).
//
// d never exceeds k, the depth of any evaluation order (γ_k).
func boundSgemm(v map[string]genome.Value, dims []int, in Inputs) errorModel {
	k := dims[2]
	tk, u, order := int(v["tile_k"].I), int(v["unroll"].I), v["loop_order"].S
	lg := log2(u)
	nkb := ceilDiv(k, tk)
	var d int
	var how string
	switch order {
	case "ikj", "ikj_fast":
		adds := 0
		for k0 := 0; k0 < k; k0 += tk {
			l := min(tk, k-k0)
			adds += l/u + l%u
		}
		d = lg + adds
		how = fmt.Sprintf("%s: groups of %d products summed by a tree of depth %d, %d additions into C over %d k-blocks of %d: d = 1 + %d + (%d-1)",
			order, u, lg, adds, nkb, tk, lg, adds)
	default:
		l := min(tk, k)
		d = 1 + (l/u - 1) + (u - 1) + lg + (nkb - 1)
		how = fmt.Sprintf("%s: %d partial sums per k-block of %d combined by a tree of depth %d, %d k-blocks added into C: d = 1 + (%d-1) + (%d-1) + %d + (%d-1)",
			order, u, l, lg, nkb, l/u, u, lg, nkb)
	}
	if d > k {
		d = k
		how += fmt.Sprintf(", capped at k = %d", k)
	}
	g, gr := gamma(d, u32), gamma(k, u64)
	accText := fmt.Sprintf("gamma_d * sum_l |a_il||b_lj|, d = %d, k = %d, u = 2^-24 (float32 %s)", d, k, how)
	if v["b_input"].S == "" || v["b_input"].S == "fp32" {
		return errorModel{
			formula: fmt.Sprintf("gamma_d * sum_l |a_il||b_lj| + gamma64_k * sum_l |a_il||b_lj| (reference), d = %d, k = %d, u = 2^-24 (float32 %s)",
				d, k, how),
			bound: func(_, abs float64) float64 { return (g + gr) * abs },
		}
	}
	// B stored in a reduced format: each b̂_lj = b_lj(1+δ) + η_lj with
	// |δ| <= rel and |η_lj| <= maxAbs, so the products' error is at most
	// rel·Σ|a||b| + maxAbs·Σ_l|a_il| (taken at the largest row of |A|), and
	// the accumulation's is γ_d of Σ|a||b̂| <= Σ|a||b| + that (precision.Sum).
	f, err := precision.ParseFormat(v["b_input"].S)
	var st *stored
	if err == nil {
		st, err = in.storedB(f)
	}
	if err != nil {
		return errorModel{formula: fmt.Sprintf("b_input %s: %v", v["b_input"].S, err), bound: func(_, _ float64) float64 { return math.Inf(1) }}
	}
	rel, _, maxAbs := st.errors(in.B)
	rowA := 0.0
	for i := 0; i+k <= len(in.A); i += k {
		r := 0.0
		for _, x := range in.A[i : i+k] {
			r += math.Abs(float64(x))
		}
		rowA = max(rowA, r)
	}
	inText := fmt.Sprintf("b_input %s: rel*sum_l|a_il||b_lj| + max abs_lj * max_i sum_l|a_il|, rel = %.3g, max abs = %.3g, max row of |A| = %.4g", f, rel, maxAbs, rowA)
	return storedProducts(storedInput{param: "b_input", f: f, rel: rel, e: maxAbs * rowA, text: inText}, g, gr, accText,
		"reference: gamma64_k * sum_l |a_il||b_lj|",
		"((1+rel)(1+gamma_d)-1) * sum_l |a_il||b_lj| + (1+gamma_d) * max abs * max row of |A| + gamma64_k * sum_l |a_il||b_lj| (reference)")
}

// storedInput is an input stored in a reduced format, as a bound sees it:
// the relative part of its storage error, and the largest absolute part
// any one sum of products takes (max abs times the other factors' Σ|.|).
type storedInput struct {
	param string
	f     precision.Format
	rel   float64
	e     float64
	text  string
}

// storedProducts is the error model of a sum of products one factor of
// which is stored: the input stage and the float32 accumulation compose
// by precision.Sum (accumulation γ_d = g), and the float64 reference adds
// gr of Σ|products|.
func storedProducts(in storedInput, g, gr float64, accText, refText, formula string) errorModel {
	stages := func(_, abs float64) []evaluate.StageBound {
		sb := precision.Sum(abs, in.rel, in.e, g)
		return []evaluate.StageBound{
			{Stage: precision.StageInput.String(), Param: in.param, Value: in.f.String(), Bound: sb.Input, How: in.text},
			{Stage: precision.StageAccumulation.String(), Value: "fp32", Bound: sb.Acc, How: "acc: " + accText},
			{Stage: stageReference, Value: "float64", Bound: gr * abs, How: refText},
		}
	}
	return errorModel{
		formula: fmt.Sprintf("%s; %s; %s", formula, in.text, accText),
		bound:   func(ref, abs float64) float64 { return sumStages(stages(ref, abs)) },
		stages:  stages,
	}
}

func conv2dVerify() verifyDef {
	return verifyDef{
		large:   1e15,
		factors: 2,
		ragged: func(d []int, prime func(int) int) []int {
			h, w, f := d[0], d[1], d[2]
			return []int{prime(h-f+1) + f - 1, prime(w-f+1) + f - 1, f}
		},
		refAbs: refAbsConv2d,
		bound:  boundConv2d,
		cols:   func(d []int) int { return d[1] - d[2] + 1 },
	}
}

// refAbsConv2d is refConv2d, and Σ|img||filt| per output, rows shared
// among GOMAXPROCS goroutines as in refAbsSgemm.
func refAbsConv2d(d []int, in Inputs) ([]float64, []float64) {
	h, w, f := d[0], d[1], d[2]
	oh, ow := h-f+1, w-f+1
	out := make([]float64, oh*ow)
	abs := make([]float64, oh*ow)
	byRows(in, oh, func(y int) {
		for x := range ow {
			s, sa := 0.0, 0.0
			for dy := range f {
				row := in.A[(y+dy)*w+x:][:f]
				for dx, fv := range in.B[dy*f:][:f] {
					p := float64(row[dx]) * float64(fv)
					s += p
					sa += math.Abs(p)
				}
			}
			out[y*ow+x], abs[y*ow+x] = s, sa
		}
	})
	return out, abs
}

// boundConv2d bounds each output, one sequential float32 sum of f·f
// products started from zero: every unroll computes each output's sum in
// the same order, so d = f·f.
//
// An image stored in a reduced format is read back as x̂ = x(1+δ) + η with
// |δ| <= rel and |η| <= max abs (precision.Format.Store at its block's
// scale), so the products' error is at most rel·Σ|x||w| + max abs·Σ|w|,
// and the accumulation's γ_d of Σ|x̂||w| <= Σ|x||w| + that (precision.Sum),
// as for sgemm's stored B.
func boundConv2d(v map[string]genome.Value, dims []int, in Inputs) errorModel {
	t := dims[2] * dims[2]
	g, gr := gamma(t, u32), gamma(t, u64)
	accText := fmt.Sprintf("gamma_d * sum|x||w|, d = f*f = %d, u = 2^-24 (float32, each output one sequential sum of f*f products)", t)
	if v["input"].S == "" || v["input"].S == "fp32" {
		return errorModel{
			formula: fmt.Sprintf("gamma_d * sum|x||w| + gamma64_d * sum|x||w| (reference), d = f*f = %d, u = 2^-24 (float32, each output one sequential sum of f*f products)", t),
			bound:   func(_, abs float64) float64 { return (g + gr) * abs },
		}
	}
	f, err := precision.ParseFormat(v["input"].S)
	var st *stored
	if err == nil {
		st, err = in.storedA(f)
	}
	if err != nil {
		return errorModel{formula: fmt.Sprintf("input %s: %v", v["input"].S, err), bound: func(_, _ float64) float64 { return math.Inf(1) }}
	}
	rel, _, maxAbs := st.errors(in.A)
	sumW := 0.0
	for _, w := range in.B[:t] {
		sumW += math.Abs(float64(w))
	}
	inText := fmt.Sprintf("input %s: rel*sum|x||w| + max abs * sum|w|, rel = %.3g, max abs = %.3g, sum|w| = %.4g", f, rel, maxAbs, sumW)
	return storedProducts(storedInput{param: "input", f: f, rel: rel, e: maxAbs * sumW, text: inText}, g, gr, accText,
		"reference: gamma64_d * sum|x||w|",
		"((1+rel)(1+gamma_d)-1) * sum|x||w| + (1+gamma_d) * max abs * sum|w| + gamma64_d * sum|x||w| (reference)")
}

func reduceVerify() verifyDef {
	return verifyDef{
		large:   1e18,
		factors: 1,
		ragged: func(d []int, prime func(int) int) []int {
			return []int{prime(d[0])}
		},
		refAbs: refAbsReduce,
		bound:  boundReduce,
	}
}

// refAbsReduce is the sum in float64 with Neumaier's compensation (each
// addition's rounding error, exact by Fast2Sum, is summed apart and added at
// the end), and Σ|a_i|. Its error is at most 2·u64·|s| + 2n²·u64²·Σ|a_i|
// (the compensation's own recursive-sum error plus the final rounding): far
// below even the float64 accumulator's bound, which the plain float64 loop
// of Reference (error up to γ64_n·Σ|a_i|) is not.
func refAbsReduce(d []int, in Inputs) ([]float64, []float64) {
	var s, c, abs float64
	for _, x := range in.A[:d[0]] {
		v := float64(x)
		s, c = neumaierAdd(s, c, v)
		abs += math.Abs(v)
	}
	return []float64{s + c}, []float64{abs}
}

// neumaierAdd adds v to the sum s with compensation c: the addition's
// rounding error, exact by Fast2Sum, goes into c.
func neumaierAdd(s, c, v float64) (float64, float64) {
	t := s + v
	if math.Abs(s) >= math.Abs(v) {
		c += (s - t) + v
	} else {
		c += (v - t) + s
	}
	return t, c
}

// boundReduce bounds the sum for the config's input format and
// accumulator.
//
// The vector is cut into nb = ceil(n/B) blocks of L <= min(B, n) values. In
// a block, each of the U partial sums takes floor(L/U) values (the first
// added to zero), the leftovers (at most U-1) go into the first, and a tree
// of depth log2 U combines the partial sums; the block partials are then
// added in block order into zero. The deepest value passes through
// d = (floor(L/U)-1) + (U-1) + log2 U + (nb-1) additions (at most n-1).
//
// Input: a value stored in a reduced format is read back as x̂_i with
// |x̂_i - x_i| <= rel·|x_i| + abs_i (precision.Format.Store at its block's
// scale); the stages compose by precision.Sum: the input's share is
// rel·Σ|a_i| + Σabs_i, the accumulator's acc·(Σ|a_i| + that), where acc is
// the accumulator's relative bound on any term:
//
// float32: γ_d, u = 2^-24.
//
// fp16, bf16: γ_{d+1} of u' = (1+u_f)(1+u) - 1: each addition is made in
// float32 and rounded to the format, and the first addition into zero
// rounds too (a value enters the accumulator rounded).
//
// float64: γ64_d; the one rounding to float32 (output) adds u·|ŝ| <=
// u·(|s| + input + acc).
//
// kahan: Kahan's compensated sum of m values perturbs each by at most
// K(m) = 2u + O(m·u²) (Knuth TAOCP 4.2.2 ex. 19, Goldberg 1991 Thm 8; here
// the second-order term is taken as (4m+4)·u²). The kernel nests three:
// each partial sum is a Kahan sum of floor(L/U) values; the first then adds
// the leftovers and the others' (s, -c) pairs, m = floor(L/U) + 3(U-1); the
// block pairs (s, -c) are Kahan-summed, m = 2·nb; the result is s - c. A
// compensation c handed on as a value is treated as an arbitrary error of
// at most 3u·Σ|values| (|c| <= u·(|s| + 2|y|) to first order). So with
// E = (1+K1)(1+3u)(1+K2)(1+3u)(1+K3)(1+3u) - 1 (K1 and its 3u absent for
// U = 1), acc = E, and the output s - c rounds once more: u·|ŝ|. This is
// looser than the textbook (2u + O(n·u²))·Σ|a_i| of one flat Kahan sum,
// which does not cover the nesting.
//
// Every bound adds the reference's own error r = 2·u64·|s| + 2n²·u64²·Σ|a_i|,
// and uses |s| <= |reference| + r.
func boundReduce(v map[string]genome.Value, dims []int, in Inputs) errorModel {
	n := dims[0]
	cfg := newReduceConfig(v)
	b, u := cfg.block, cfg.unroll
	l := min(b, n)
	nb := ceilDiv(n, b)
	lg := log2(u)
	d := min(max((l/u-1)+(u-1)+lg+(nb-1), 0), n-1)
	tree := fmt.Sprintf("%d blocks of %d, %d partial sums per block combined by a tree of depth %d, block partials summed in order: d = (%d-1) + (%d-1) + %d + (%d-1) = %d",
		nb, b, u, lg, l/u, u, lg, nb, d)
	nf := float64(n)
	refErr := func(ref, abs float64) float64 { return 2*u64*math.Abs(ref) + 2*nf*nf*u64*u64*abs }
	const refText = " + r, r = 2u64|s| + 2n^2 u64^2 sum|a_i| (compensated float64 reference)"

	// The input stage.
	var rel, sabs float64
	inText := "input fp32: stored exactly"
	if cfg.input != precision.FP32 {
		st, err := in.storedA(cfg.input)
		if err != nil {
			return errorModel{
				formula: fmt.Sprintf("input %s: %v", cfg.input, err),
				bound:   func(_, _ float64) float64 { return math.Inf(1) },
			}
		}
		rel, sabs, _ = st.errors(in.A)
		inText = fmt.Sprintf("input %s: rel*sum|a_i| + sum abs_i, rel = %.3g, sum abs_i = %.3g over %d scales of %d values", cfg.input, rel, sabs, len(st.scales), storeBlock)
		if st.scales == nil {
			inText = fmt.Sprintf("input %s: rel*sum|a_i| + sum abs_i, rel = %.3g, sum abs_i = %.3g (no scale)", cfg.input, rel, sabs)
		}
	}

	// The accumulator: its relative bound on any term, and the unit
	// roundoff of the final rounding to float32 (0 when none).
	var acc, uOut float64
	var accText string
	accMax := math.Inf(1) // the largest partial sum the accumulator holds
	switch cfg.acc {
	case accFloat64:
		acc, uOut = gamma(d, u64), u32
		accText = fmt.Sprintf("acc float64: gamma64_d, d = %d, u64 = 2^-53 (%s); output: one rounding to float32, u*|s|", d, tree)
	case accKahan:
		k := func(m int) float64 { return 2*u32 + float64(4*m+4)*u32*u32 }
		var e float64
		var levels string
		if u == 1 {
			e = k(l)
			levels = fmt.Sprintf("K1 = K(%d) per block", l)
		} else {
			m1, m2 := l/u, l/u+3*(u-1)
			e = (1+k(m1))*(1+3*u32)*(1+k(m2)) - 1
			levels = fmt.Sprintf("K(%d) per partial sum, K(%d) merging the %d partial sums", m1, m2, u)
		}
		e = (1+e)*(1+3*u32) - 1 // the block's c handed on
		e = (1+e)*(1+k(2*nb)) - 1
		e = (1+e)*(1+3*u32) - 1 // the final c
		acc, uOut = e, u32
		accText = fmt.Sprintf("acc kahan: E = %.4g = %.2fu, u = 2^-24, n = %d (float32 Kahan sums nested: %s, K(%d) over the %d block pairs; K(m) = 2u + (4m+4)u^2, 3u per compensation handed on); output: s - c rounded, u*|s|",
			e, e/u32, n, levels, 2*nb, nb)
	case accFP16, accBF16:
		f := precision.FP16
		if cfg.acc == accBF16 {
			f = precision.BF16
		}
		ua := precision.Chain(f.UnitRoundoff(), u32)
		acc, accMax = gamma(d+1, ua), f.MaxFinite()
		accText = fmt.Sprintf("acc %s: gamma_(d+1) of u' = (1+u_%s)(1+u)-1 = %.4g, d = %d (%s; each addition made in float32 and rounded to %s, the first into zero too); +Inf when (1+acc)*sum|stored values| may pass %s's largest value %g (a partial sum may overflow)", f, f, ua, d, tree, f, f, accMax)
	default:
		acc = gamma(d, u32)
		accText = fmt.Sprintf("acc float32: gamma_d, d = %d, u = 2^-24 (%s)", d, tree)
	}
	inputFmt := cfg.input.String()
	stages := func(ref, abs float64) []evaluate.StageBound {
		sb := precision.Sum(abs, rel, sabs, acc)
		if (1+acc)*(abs+sb.Input) > accMax {
			sb.Acc = math.Inf(1) // every partial sum is at most this
		}
		r := refErr(ref, abs)
		out := []evaluate.StageBound{
			{Stage: precision.StageInput.String(), Param: "input", Value: inputFmt, Bound: sb.Input, How: inText},
			{Stage: precision.StageAccumulation.String(), Param: "acc", Value: cfg.acc, Bound: sb.Acc, How: accText},
		}
		if uOut > 0 {
			out = append(out, evaluate.StageBound{Stage: precision.StageOutput.String(), Value: "fp32",
				Bound: precision.Output(uOut, math.Abs(ref)+r, sb.Total()), How: "output: the result rounded to float32, u*(|s| + the error before it)"})
		}
		return append(out, evaluate.StageBound{Stage: stageReference, Value: "float64", Bound: r, How: "reference: r" + refText[len(" + r, r"):]})
	}
	return errorModel{
		formula: fmt.Sprintf("((1+rel)(1+acc)-1)*sum|a_i| + (1+acc)*sum abs_i + output%s, n = %d; %s; %s", refText, n, inText, accText),
		bound:   func(ref, abs float64) float64 { return sumStages(stages(ref, abs)) },
		stages:  stages,
	}
}

// stageReference names the share of a bound that is the float64
// reference's own error.
const stageReference = "reference"

// sumStages is the whole bound of its stages.
func sumStages(ss []evaluate.StageBound) float64 {
	t := 0.0
	for _, s := range ss {
		t += s.Bound
	}
	return t
}

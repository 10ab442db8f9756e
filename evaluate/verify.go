package evaluate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/quasim/quasim/genome"
)

// The tolerance kinds of VerifySettings.Tolerance.
const (
	ToleranceAbs = "abs" // |got - want| <= Value
	ToleranceRel = "rel" // |got - want| <= Value * max(|want|, mean |want| of the output)
	ToleranceULP = "ulp" // float32 ULPs between got and float32(want) <= Value
)

// The policies of VerifySettings.Nondeterministic.
const (
	PolicyReject  = "reject"  // a config whose repeats differ fails verification
	PolicyCertify = "certify" // it passes, and its certificate says it is not bitwise deterministic
)

// VerifySettings come from the kernel spec's verify section; zero values take
// defaults (see WithDefaults).
type VerifySettings struct {
	Tolerance        string   // abs | rel | ulp (default rel)
	Value            float64  // tolerance value (default: 1e-4 for rel, 1e-3 for abs, 64 for ulp)
	Repeats          int      // determinism runs (default 3)
	Nondeterministic string   // reject (default) | certify
	Seeds            []uint64 // random input seeds for parity (default 1,2,3)
	Seed             uint64   // bootstrap RNG seed (default 1)
	// Inputs is the sign of the seeded random inputs: signed (the default,
	// uniform in [-1, 1)) or positive (their magnitudes, uniform in
	// [0, 1)), for a job whose data are positive (norms, probabilities)
	// and whose sums are so better conditioned. Evaluators that make no
	// inputs ignore it.
	Inputs string
	// Budget is the job's error budget (zero: none). A config passes it
	// when its a-priori error bound and its measured error, both in the
	// budget's units, are within Budget.Value on every case.
	Budget ErrorBudget
}

// ErrorBudget is the largest error a job accepts from a served config:
// Kind is abs, rel or ulp (measured as the tolerance kinds are), Value > 0.
// The zero ErrorBudget is none.
type ErrorBudget struct {
	Kind  string
	Value float64
}

// IsZero reports whether b is no budget.
func (b ErrorBudget) IsZero() bool { return b == ErrorBudget{} }

// The kinds of VerifySettings.Inputs.
const (
	InputsSigned   = "signed"
	InputsPositive = "positive"
)

// Default verification settings.
const (
	DefaultRelTolerance = 1e-4
	DefaultAbsTolerance = 1e-3
	DefaultULPTolerance = 64
	DefaultRepeats      = 3
)

// WithDefaults returns s with its zero fields set to their defaults. Seeds is
// copied, so the result shares no memory with s.
func (s VerifySettings) WithDefaults() VerifySettings {
	if s.Tolerance == "" {
		s.Tolerance = ToleranceRel
	}
	if s.Value == 0 {
		switch s.Tolerance {
		case ToleranceAbs:
			s.Value = DefaultAbsTolerance
		case ToleranceULP:
			s.Value = DefaultULPTolerance
		default:
			s.Value = DefaultRelTolerance
		}
	}
	if s.Repeats == 0 {
		s.Repeats = DefaultRepeats
	}
	if s.Nondeterministic == "" {
		s.Nondeterministic = PolicyReject
	}
	if len(s.Seeds) == 0 {
		s.Seeds = []uint64{1, 2, 3}
	} else {
		s.Seeds = slices.Clone(s.Seeds)
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	return s
}

// Validate reports the first setting that is out of range. Zero values are
// valid: they take defaults.
func (s VerifySettings) Validate() error {
	switch s.Tolerance {
	case "", ToleranceAbs, ToleranceRel, ToleranceULP:
	default:
		return fmt.Errorf("verify tolerance %q: want abs, rel or ulp", s.Tolerance)
	}
	if !(s.Value >= 0) || math.IsInf(s.Value, 1) {
		return fmt.Errorf("verify tolerance value %v: want a finite value >= 0", s.Value)
	}
	if s.Repeats < 0 {
		return fmt.Errorf("verify repeats %d: want >= 0", s.Repeats)
	}
	switch s.Nondeterministic {
	case "", PolicyReject, PolicyCertify:
	default:
		return fmt.Errorf("verify nondeterministic %q: want reject or certify", s.Nondeterministic)
	}
	switch s.Inputs {
	case "", InputsSigned, InputsPositive:
	default:
		return fmt.Errorf("verify inputs %q: want signed or positive", s.Inputs)
	}
	if !s.Budget.IsZero() {
		switch s.Budget.Kind {
		case ToleranceAbs, ToleranceRel, ToleranceULP:
		default:
			return fmt.Errorf("verify error budget kind %q: want abs, rel or ulp", s.Budget.Kind)
		}
		if !(s.Budget.Value > 0) || math.IsInf(s.Budget.Value, 1) {
			return fmt.Errorf("verify error budget %v: want a finite value > 0", s.Budget.Value)
		}
	}
	return nil
}

// ParityResult compares the config's output with the reference on every case.
type ParityResult struct {
	Cases []string // e.g. "seed=1", "zeros", "large x1e+15", "ragged 37x41x29"; a skipped case says so
	// MaxAbsErr is the largest |got - want| over every element of every
	// case, the "large" case's divided by the factor its outputs were scaled
	// by (an abs tolerance applies to it in those units).
	MaxAbsErr float64
	// MaxRelErr is the largest |got - want| / max(|want|, scale, tiny), where
	// scale is the mean |want| of the case's output (so near-zero outputs of
	// sums with cancellation do not explode it) and tiny the smallest normal
	// float32. With Tolerance rel, Passed is MaxRelErr <= Value.
	MaxRelErr float64
	MaxULP    float64 // largest distance in float32 ULPs between got and float32(want)
	Tolerance string  // abs | rel | ulp
	Value     float64
	Worst     string // case and element index of the worst error (relative to what the tolerance allows), or what failed
	Passed    bool
	// Reference says what the output was compared with; empty means a
	// float64 reference implementation.
	Reference string
	// NotChecked says why no output was compared (a kernel tuned without
	// an answer to compare with); Passed is then false and the check
	// counts neither way.
	NotChecked string
}

// DeterminismResult says whether repeated runs on the same input gave
// bitwise identical outputs.
type DeterminismResult struct {
	Runs      int
	Identical bool    // every run's output had the same float32 bits as the first
	MaxSpread float64 // max |run - first run| over runs and elements
	Passed    bool    // Identical, or Policy is certify
	Policy    string  // reject | certify
}

// ErrorBoundResult checks the measured error against an a-priori forward
// error bound for the config's precision and accumulation order.
type ErrorBoundResult struct {
	// Formula is the bound, e.g. "gamma_n * sum|a_i|, n=16777216, u=2^-24
	// (float32 sequential, blocks of 256 + 65536 block partials)", and where
	// the worst element was.
	Formula  string
	Bound    float64 // absolute bound on |got - exact| at the worst element (the max ratio element)
	Measured float64 // measured |got - reference| at that element
	Ratio    float64 // max over elements of measured/bound
	Passed   bool    // measured <= bound everywhere
	// NotChecked says why no bound was checked (an evaluator that sees a
	// checksum, not outputs, has nothing to bound); Passed is then false
	// and the check counts neither way.
	NotChecked string
}

// StageBound is one stage's share of a config's a-priori error bound.
type StageBound struct {
	Stage string  // input, intermediate, accumulation, output, or reference (the float64 reference's own error)
	Param string  // the precision parameter that sets it; "" when fixed
	Value string  // its format or accumulator
	Bound float64 // absolute, at the element where the budget is tightest
	How   string  // the formula
}

// BudgetResult checks a config against the job's error budget: its
// precision map, each stage's bound, the composed bound and the measured
// error, the last two in the budget's units at the element of each case
// where they are largest.
type BudgetResult struct {
	Kind     string
	Value    float64
	Map      map[string]string // precision parameter -> value
	Stages   []StageBound      // at the element where Bound is largest
	Bound    float64           // largest a-priori bound, in the budget's units
	Measured float64           // largest measured error, in the budget's units
	At       string            // the case and element of Bound
	Passed   bool              // Bound <= Value and Measured <= Value
	// NotChecked says why no budget was checked (no error model, or no
	// outputs); Passed is then false and the config is not certified.
	NotChecked string
}

// LatencyResult is the distribution of timed runs. Verification times
// nothing: a certificate's latency is measured after it, by the search's own
// protocol (internal/tuner), so that a config has one timing protocol.
type LatencyResult struct {
	TimesMS  []float64 // every timed run, in the order run
	MedianMS float64
	P95MS    float64
	CILowMS  float64 // bootstrap (1000 resamples, seeded) 95% confidence interval of the median
	CIHighMS float64
}

// VerifyReport is the outcome of verifying one config.
type VerifyReport struct {
	Parity      ParityResult
	Determinism DeterminismResult
	ErrorBound  ErrorBoundResult
	Budget      BudgetResult // zero when the job has no budget
	CostS       float64      // wall seconds the verification took
}

// Passed reports whether the config passed parity, determinism, the error
// bound where one was checked, and the error budget where the job has one
// (a budget that could not be checked fails).
func (r VerifyReport) Passed() bool {
	return (r.Parity.Passed || r.Parity.NotChecked != "") && r.Determinism.Passed && (r.ErrorBound.Passed || r.ErrorBound.NotChecked != "") &&
		(r.Budget.Kind == "" || r.Budget.Passed)
}

// Verifier is implemented by evaluators that can check a config's output.
type Verifier interface {
	// Verify checks config c of problem p as s says. Check failures are in
	// the report; the error is for the harness (a cancelled ctx, a config
	// outside the space, an unknown problem, invalid settings).
	Verify(ctx context.Context, c genome.Config, p Problem, s VerifySettings) (VerifyReport, error)
}

// bootstrapResamples is the number of bootstrap resamples of LatencyStats.
const bootstrapResamples = 1000

// LatencyStats summarises timed runs: the median, the 95th percentile (both
// linearly interpolated between order statistics) and a percentile-bootstrap
// 95% confidence interval of the median from 1000 resamples drawn with a PCG
// seeded with (seed, 0). No times give a zero result.
func LatencyStats(timesMS []float64, seed uint64) LatencyResult {
	r := LatencyResult{TimesMS: slices.Clone(timesMS)}
	n := len(timesMS)
	if n == 0 {
		return r
	}
	sorted := slices.Sorted(slices.Values(timesMS))
	r.MedianMS = quantile(sorted, 0.5)
	r.P95MS = quantile(sorted, 0.95)
	rng := rand.New(rand.NewPCG(seed, 0))
	meds := make([]float64, bootstrapResamples)
	buf := make([]float64, n)
	for i := range meds {
		for j := range buf {
			buf[j] = timesMS[rng.IntN(n)]
		}
		slices.Sort(buf)
		meds[i] = quantile(buf, 0.5)
	}
	slices.Sort(meds)
	r.CILowMS = quantile(meds, 0.025)
	r.CIHighMS = quantile(meds, 0.975)
	return r
}

// quantile is the q-quantile of sorted, interpolating linearly between the
// order statistics (Hyndman and Fan's type 7, the default of R and NumPy).
func quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

package harness

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

var _ evaluate.Verifier = (*Harness)(nil)

// Verify implements evaluate.Verifier: the config's checksum against the
// default config's (parity, under s's tolerance), the config run
// s.Repeats times, one timed run each (determinism: identical checksums).
// A harness reports no outputs, so the error
// bound is not checked, and the report says so. With an error budget, each
// verify run asks the harness for its accuracy (accuracy.go), and the
// budget is checked on the largest bound and measured error it reports.
func (h *Harness) Verify(ctx context.Context, c genome.Config, p evaluate.Problem, s evaluate.VerifySettings) (evaluate.VerifyReport, error) {
	start := time.Now()
	if err := s.Validate(); err != nil {
		return evaluate.VerifyReport{}, fmt.Errorf("verify %s: %w", h.hello.Name, err)
	}
	s = s.WithDefaults()
	sp, err := h.Space(p)
	if err != nil {
		return evaluate.VerifyReport{}, err
	}
	if !sp.InRange(c) {
		return evaluate.VerifyReport{}, fmt.Errorf("verify %s: %w: %v", h.hello.Name, evaluate.ErrNotInSpace, []int(c))
	}
	var rep evaluate.VerifyReport
	rep.Parity = evaluate.ParityResult{Tolerance: s.Tolerance, Value: s.Value, Cases: []string{"checksum of problem " + p.String()},
		Reference: "the checksum the harness reports for the default config"}
	rep.ErrorBound = evaluate.ErrorBoundResult{NotChecked: "an exec harness reports a checksum, not its outputs: there is no error to bound"}
	rep.Determinism = evaluate.DeterminismResult{Runs: s.Repeats, Policy: s.Nondeterministic}

	var sums []float64
	var accs []*Accuracy
	var own *Parity // the harness's own comparison, from the first run
	for i := range s.Repeats {
		res, status, note, err := h.run(ctx, sp.ConfigMap(c), p, 1, true, s.Budget.Kind)
		if err != nil {
			return rep, err
		}
		if status != evaluate.StatusOK {
			rep.Parity.Worst = fmt.Sprintf("verify run: %s: %s", status, note)
			rep.CostS = time.Since(start).Seconds()
			return rep, nil
		}
		if i == 0 {
			own = res.Parity
		}
		sums = append(sums, *res.Checksum)
		accs = append(accs, res.Accuracy)
	}
	if !s.Budget.IsZero() {
		rep.Budget = h.budget(s.Budget, sp.ConfigMap(c), accs)
	}
	h.determinism(&rep, sums, s)
	if own != nil {
		// The harness compared every element with its reference: that is
		// the check made, and its tolerance the one named.
		rep.Parity = ownParity(own, p)
		rep.CostS = time.Since(start).Seconds()
		return rep, nil
	}
	ref, note, err := h.reference(ctx, sp, p)
	if err != nil {
		return rep, err
	}
	if note != "" {
		rep.Parity.Worst = note
		rep.CostS = time.Since(start).Seconds()
		return rep, nil
	}
	got := sums[0]
	absErr := math.Abs(got - ref)
	relErr := absErr / math.Max(math.Abs(ref), math.SmallestNonzeroFloat32)
	rep.Parity.MaxAbsErr, rep.Parity.MaxRelErr = absErr, relErr
	rep.Parity.MaxULP = ulps(float32(got), float32(ref))
	switch s.Tolerance {
	case evaluate.ToleranceAbs:
		rep.Parity.Passed = absErr <= s.Value
	case evaluate.ToleranceULP:
		rep.Parity.Passed = rep.Parity.MaxULP <= s.Value
	default:
		rep.Parity.Passed = relErr <= s.Value
	}
	rep.Parity.Worst = fmt.Sprintf("checksum %g against the default's %g", got, ref)
	rep.CostS = time.Since(start).Seconds()
	return rep, nil
}

// determinism compares the checksums of the verify runs, bit for bit.
func (h *Harness) determinism(rep *evaluate.VerifyReport, sums []float64, s evaluate.VerifySettings) {
	got := sums[0]
	rep.Determinism.Identical = true
	for _, v := range sums[1:] {
		if math.Float64bits(v) != math.Float64bits(got) {
			rep.Determinism.Identical = false
		}
		rep.Determinism.MaxSpread = math.Max(rep.Determinism.MaxSpread, math.Abs(v-got))
	}
	rep.Determinism.Passed = rep.Determinism.Identical || s.Nondeterministic == evaluate.PolicyCertify
}

// ownParity is the parity result of a harness's own comparison on p. A
// run whose outputs failed it never answers ok, so it passed.
func ownParity(o *Parity, p evaluate.Problem) evaluate.ParityResult {
	if o.NotChecked != "" {
		return evaluate.ParityResult{NotChecked: o.NotChecked}
	}
	value := o.Rel
	if o.Rel == 0 {
		value = o.Abs
	}
	return evaluate.ParityResult{
		Cases:     []string{fmt.Sprintf("outputs of problem %s, %d elements compared (%s: abs %g, rel %g)", p.String(), o.Total, o.Tolerance, o.Abs, o.Rel)},
		MaxAbsErr: o.MaxAbsErr, MaxRelErr: o.MaxRelErr,
		Tolerance: o.Tolerance, Value: value, Worst: o.Worst,
		Passed: o.Bad == 0, Reference: o.Reference,
	}
}

// reference is the default config's checksum for p, measured once. A
// non-empty note says why there is none (the default failed).
func (h *Harness) reference(ctx context.Context, sp *genome.Space, p evaluate.Problem) (float64, string, error) {
	h.mu.Lock()
	ref, ok := h.refs[p.String()]
	h.mu.Unlock()
	if ok {
		return ref, "", nil
	}
	res, status, note, err := h.run(ctx, sp.ConfigMap(sp.Default()), p, 1, true, "")
	if err != nil {
		return 0, "", err
	}
	if status != evaluate.StatusOK {
		return 0, fmt.Sprintf("the default config, the reference, failed: %s: %s", status, note), nil
	}
	h.mu.Lock()
	h.refs[p.String()] = *res.Checksum
	h.mu.Unlock()
	return *res.Checksum, "", nil
}

// ulps is the distance between a and b in float32 units in the last place.
func ulps(a, b float32) float64 {
	if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) {
		return math.Inf(1)
	}
	// Map the bits to integers that are ordered as the floats are.
	ord := func(f float32) int64 {
		u := math.Float32bits(f)
		if u&0x80000000 != 0 {
			return -int64(u & 0x7fffffff)
		}
		return int64(u)
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return float64(d)
}

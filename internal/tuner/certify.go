package tuner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
)

// Certification is what Certify decided.
type Certification struct {
	Served   string   // key served now; "" = the default
	Cert     string   // its certificate id
	Rejected []string // keys that failed verification, now wrong_result
}

// errNoBudget says a certification verified as many configs as it may.
var errNoBudget = errors.New("verification budget spent")

// ErrNoSigner is returned by Certify when the tuner has no signing key.
var ErrNoSigner = errors.New("no signing key")

// Certify verifies the job's best measured configs, best first, until one
// passes, signs its certificate and makes it the served config. A config
// that fails is marked wrong_result and never served; one whose certificate
// was revoked is not certified again. A config that already holds a valid
// certificate keeps it. When nothing passes the job serves nothing, so
// runtimes get the default.
func (t *Tuner) Certify(ctx context.Context, job Job, cycle int) (Certification, error) {
	st := t.cfg.Store
	if t.cfg.Signer == nil {
		return Certification{}, ErrNoSigner
	}
	trials, err := st.Trials(job.Key)
	if err != nil {
		return Certification{}, fmt.Errorf("load trials: %w", err)
	}
	metas, err := st.JobCerts(job.Key)
	if err != nil {
		return Certification{}, fmt.Errorf("load certificates: %w", err)
	}
	valid := map[string]store.CertMeta{} // key -> its newest live certificate
	revoked := map[string]bool{}
	for _, m := range metas {
		if m.Revoked {
			revoked[m.Key] = true
		} else if v, ok := valid[m.Key]; !ok || m.IssuedAt.After(v.IssuedAt) {
			// A re-verified config keeps the certificate of how it runs now.
			valid[m.Key] = m
		}
	}
	// A served config marked stale (runtimes saw it drift) no longer meets
	// its certificate: it is verified again, so that keeping it clears the
	// mark under a certificate of how it runs now.
	if old, ok, err := st.Served(job.Key); err != nil {
		return Certification{}, err
	} else if ok && old.Stale != "" {
		delete(valid, old.Key)
	}
	var cands []store.Trial
	for _, tr := range trials {
		if tr.Status != string(evaluate.StatusOK) || revoked[tr.Key] {
			continue
		}
		// Only a valid config of the current space is served: an imported
		// trial may name one that violates the constraints.
		if c, err := job.Space.ParseKey(tr.Key); err != nil || !job.Space.Valid(c) {
			continue
		}
		cands = append(cands, tr)
	}
	// By the job's objective; trials without the energy it needs are out.
	vals := map[string]float64{}
	kept := cands[:0]
	for _, tr := range cands {
		if v, ok := job.value(tr.TimeMS, tr.EnergyMJ); ok {
			vals[tr.Key] = v
			kept = append(kept, tr)
		}
	}
	cands = kept
	slices.SortStableFunc(cands, func(a, b store.Trial) int { return cmp.Compare(vals[a.Key], vals[b.Key]) })
	if err := t.confirm(ctx, job, cands); err != nil {
		return Certification{}, err
	}
	var res Certification
	tried := 0
	rejected := map[string]bool{}
	// certify returns tr's live certificate, verifying and signing a new
	// one when it has none; nil when it fails verification, errNoBudget
	// once Candidates configs were verified.
	certify := func(tr store.Trial) (*store.CertMeta, error) {
		if m, ok := valid[tr.Key]; ok {
			return &m, nil
		}
		if tried == t.cfg.Candidates {
			return nil, errNoBudget
		}
		tried++
		cert, err := t.verify(ctx, job, tr)
		if err != nil {
			return nil, err
		}
		if !cert.Passed() {
			why := failedChecks(cert)
			if err := st.MarkTrial(job.Key, tr.Key, string(evaluate.StatusWrongResult), why); err != nil {
				return nil, fmt.Errorf("mark %s wrong_result: %w", tr.Key, err)
			}
			t.cfg.Log.Warn().Str("job_id", job.Key.String()).Str("config", tr.Key).Str("failed", why).Msg("verification failed; config marked wrong_result")
			res.Rejected = append(res.Rejected, tr.Key)
			rejected[tr.Key] = true
			return nil, nil
		}
		if err := certs.Sign(cert, t.cfg.Signer); err != nil {
			return nil, fmt.Errorf("sign: %w", err)
		}
		body, err := cert.Encode()
		if err != nil {
			return nil, fmt.Errorf("encode certificate: %w", err)
		}
		meta := certMeta(cert)
		if err := st.PutCert(job.Key, meta, body); err != nil {
			return nil, fmt.Errorf("store certificate: %w", err)
		}
		valid[tr.Key] = meta
		return &meta, nil
	}
	for _, tr := range cands {
		m, err := certify(tr)
		if errors.Is(err, errNoBudget) {
			break
		}
		if err != nil {
			return res, err
		}
		if m == nil {
			continue
		}
		front, err := t.front(cands, rejected, certify)
		if err != nil {
			return res, err
		}
		if err := t.rebest(job, trials, rejected); err != nil {
			return res, err
		}
		return t.serve(job, tr, *m, front, cycle, res)
	}
	if err := t.rebest(job, trials, rejected); err != nil {
		return res, err
	}
	if err := st.ClearServed(job.Key); err != nil {
		return res, err
	}
	return res, nil
}

// keepMargin is how much slower than the best finalist the served config
// may measure again and still stay first: noise between two certified
// configs does not switch the one served from cycle to cycle.
const keepMargin = 0.05

// confirm measures the first cfg.Finalists of cands (sorted best first)
// again, each in cfg.ConfirmRounds fresh processes, and reorders them by
// their medians, where the evaluator measures in processes of its own and
// the objective is time alone; the served config stays first while it is
// within keepMargin of the best. Each finalist's time becomes its median
// for the rest of the certification (the front, the served record); the
// trials stored keep the times the search measured.
func (t *Tuner) confirm(ctx context.Context, job Job, cands []store.Trial) error {
	r, ok := job.Evaluator.(evaluate.Refresher)
	if k := job.Objective.Kind; !ok || t.cfg.Finalists < 2 || len(cands) < 2 || (k != "" && k != evaluate.TimeObjective.Kind) {
		return nil
	}
	n := min(len(cands), t.cfg.Finalists)
	fs := make([]evaluate.Finalist, n)
	byKey := map[string]store.Trial{}
	for i, tr := range cands[:n] {
		c, err := job.Space.ParseKey(tr.Key)
		if err != nil {
			return err
		}
		fs[i] = evaluate.Finalist{Config: c, Key: tr.Key, TimesMS: []float64{tr.TimeMS}}
		byKey[tr.Key] = tr
	}
	// Times taken beside other work would rank the finalists by noise.
	// The cycle waited for an idle device before each generation; here a
	// device busy again keeps the search's order rather than wait a second
	// time.
	if t.cfg.Busy != nil {
		if why := t.cfg.Busy(job.Key.Device); why != "" {
			t.cfg.Log.Warn().Str("job_id", job.Key.String()).Str("busy", why).
				Msg("device busy; finalists not measured again; verified in the search's order")
			return nil
		}
	}
	// The device is held throughout: a fresh worker prepares its problem
	// on it too.
	unlock, err := t.cfg.Lock(ctx, job.Key.Device)
	if err != nil {
		return err
	}
	around := func(c genome.Config) (func(), error) { return t.applyKnobs(job, c) }
	ranked, err := evaluate.Confirm(ctx, r, job.Problem, fs, t.cfg.ConfirmRounds, around)
	unlock()
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		// Say so and go on: verification then runs the search's best
		// first, as without finalists.
		t.cfg.Log.Warn().Err(err).Str("job_id", job.Key.String()).Msg("finalists not measured again; verified in the search's order")
		return nil
	}
	if sv, ok, err := t.cfg.Store.Served(job.Key); err != nil {
		return err
	} else if ok && sv.Stale == "" {
		for j, f := range ranked {
			if j > 0 && f.Key == sv.Key && f.MedianMS > 0 && f.MedianMS <= ranked[0].MedianMS*(1+keepMargin) {
				copy(ranked[1:j+1], ranked[:j])
				ranked[0] = f
				break
			}
		}
	}
	var said []string
	for i, f := range ranked {
		tr := byKey[f.Key]
		if f.MedianMS > 0 {
			tr.TimeMS = f.MedianMS
		}
		cands[i] = tr
		said = append(said, fmt.Sprintf("%s %.4g ms (%d failed)", f.Key, f.MedianMS, f.Failed))
	}
	t.cfg.Log.Info().Str("job_id", job.Key.String()).Int("rounds", t.cfg.ConfirmRounds).Strs("finalists", said).
		Msg("finalists measured again in fresh processes; verified in order of their medians")
	return nil
}

// front is the Pareto front of (time, energy) over the candidates that
// pass verification: each config on the front is certified, one that
// fails is dropped and the front drawn again, until it holds only
// certified configs; once the verification budget is spent, a point that
// would need verifying is left off and the front drawn again without it,
// so the points certified before stay.
func (t *Tuner) front(cands []store.Trial, rejected map[string]bool, certify func(store.Trial) (*store.CertMeta, error)) ([]store.FrontPoint, error) {
	byKey := map[string]store.Trial{}
	for _, tr := range cands {
		byKey[tr.Key] = tr
	}
	unverified := map[string]bool{} // past the budget: out of this front, not wrong
	for {
		var pts []evaluate.Point
		for _, tr := range cands {
			if !rejected[tr.Key] && !unverified[tr.Key] {
				pts = append(pts, evaluate.Point{Key: tr.Key, TimeMS: tr.TimeMS, EnergyMJ: tr.EnergyMJ})
			}
		}
		var out []store.FrontPoint
		redraw := false
		for _, p := range evaluate.Front(pts) {
			m, err := certify(byKey[p.Key])
			if errors.Is(err, errNoBudget) {
				// Left off, and the front drawn again without it: a
				// certified point it dominated is on the front then.
				unverified[p.Key] = true
				redraw = true
				break
			}
			if err != nil {
				return nil, err
			}
			if m == nil {
				redraw = true
				break
			}
			// Drawn by the search's times; shown at its certificate's.
			out = append(out, store.FrontPoint{Key: p.Key, TimeMS: cmp.Or(m.TimeMS, p.TimeMS), EnergyMJ: p.EnergyMJ, Certificate: m.ID})
		}
		if !redraw {
			return out, nil
		}
	}
}

// serve makes tr the served config under its stored certificate meta,
// with the job's certified front.
func (t *Tuner) serve(job Job, tr store.Trial, meta store.CertMeta, front []store.FrontPoint, cycle int, res Certification) (Certification, error) {
	st := t.cfg.Store
	res.Served, res.Cert = tr.Key, meta.ID
	old, ok, err := st.Served(job.Key)
	if err != nil {
		return res, err
	}
	// A stale record is always replaced: the promotion clears the mark.
	same := ok && old.Stale == "" && old.Key == tr.Key && old.Certificate == meta.ID
	if same && slices.Equal(old.Front, front) {
		return res, nil
	}
	// Its time is its certificate's, measured after it was selected: the
	// search's (the best of many noisy measurements) stays in its trial.
	sv := store.Served{Key: tr.Key, TimeMS: meta.TimeMS, CILowMS: meta.CILowMS, CIHighMS: meta.CIHighMS, Speedup: meta.Speedup,
		Cycle: cycle, PromotedAt: t.cfg.Now(), Certificate: meta.ID, Front: front}
	if same {
		// Only the front moved: the served config keeps its record.
		sv.PromotedAt, sv.Cycle = old.PromotedAt, old.Cycle
	}
	err = st.PutServed(job.Key, sv)
	if err != nil {
		return res, fmt.Errorf("promote %s: %w", tr.Key, err)
	}
	t.cfg.Log.Info().Str("job_id", job.Key.String()).Str("config", tr.Key).Float64("time_ms", sv.TimeMS).Float64("search_ms", tr.TimeMS).Str("cert", meta.ID).Msg("promoted")
	return res, nil
}

// verify runs every check the evaluator supports on one config and returns
// its unsigned certificate.
func (t *Tuner) verify(ctx context.Context, job Job, tr store.Trial) (*certs.Certificate, error) {
	c, err := job.Space.ParseKey(tr.Key)
	if err != nil {
		return nil, err
	}
	cert := &certs.Certificate{
		V: 1,
		Job: certs.Job{
			Kernel: job.Key.Kernel, SpecHash: job.Key.SpecHash, Problem: job.Key.Problem,
			Device: job.Key.Device, Details: t.cfg.Details,
		},
		Key:      tr.Key,
		Config:   job.Space.ConfigMap(c),
		IssuedAt: t.cfg.Now().UTC(),
	}
	cons := certs.Check{Name: "constraints", Passed: true, Inputs: map[string]any{"constraints": job.Space.Constraints()}}
	if err := job.Space.Check(c); err != nil {
		cons.Passed, cons.Note = false, err.Error()
	}
	v, ok := job.Evaluator.(evaluate.Verifier)
	if !ok {
		// Recorded measurements have no outputs to check: the certificate
		// says what was checked, and nothing more.
		times := tr.TimesMS
		if len(times) == 0 { // a recording without its runs, or compacted
			times = []float64{tr.TimeMS}
		}
		lat := evaluate.LatencyStats(times, 1)
		const why = "the evaluator replays recorded measurements: there is no output to check"
		cert.Checks = []certs.Check{
			{Name: "parity", NotChecked: why},
			{Name: "determinism", NotChecked: why},
			{Name: "error_bound", NotChecked: why},
			cons,
		}
		if bud := job.Verify.Budget; !bud.IsZero() {
			// A budget is a promise about the error: with nothing to check
			// it, the config is not certified.
			cert.Checks = append(cert.Checks, budgetCheck(bud, evaluate.BudgetResult{NotChecked: why}))
		}
		cert.Latency = latency(lat)
		return cert, nil
	}
	unlock, err := t.cfg.Lock(ctx, job.Key.Device)
	if err != nil {
		return nil, err
	}
	restore, err := t.applyKnobs(job, c)
	if err != nil {
		unlock()
		return nil, err
	}
	rep, err := v.Verify(ctx, c, job.Problem, job.Verify)
	restore()
	unlock()
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", tr.Key, err)
	}
	p, d, b := rep.Parity, rep.Determinism, rep.ErrorBound
	cert.Checks = []certs.Check{
		{
			Name: "parity", Passed: p.Passed,
			Inputs: map[string]any{"cases": p.Cases, "tolerance_kind": p.Tolerance, "reference": cmp.Or(p.Reference, "float64 reference implementation")},
			Results: map[string]any{
				"max_abs_err": p.MaxAbsErr, "max_rel_err": p.MaxRelErr, "max_ulp": p.MaxULP,
				"tolerance": p.Value, "tolerance_kind": p.Tolerance, "worst": p.Worst,
			},
		},
		{
			Name: "determinism", Passed: d.Passed,
			Inputs:  map[string]any{"runs": d.Runs, "policy": d.Policy},
			Results: map[string]any{"bitwise_identical": d.Identical, "max_spread": d.MaxSpread},
		},
		errorBound(b),
		cons,
	}
	if !d.Identical && d.Passed {
		cert.Checks[1].Note = "not bitwise deterministic; certified as such by the spec's policy"
	}
	if p.NotChecked != "" {
		cert.Checks[0] = certs.Check{Name: "parity", NotChecked: p.NotChecked}
	}
	if bud := job.Verify.Budget; !bud.IsZero() {
		cert.Checks = append(cert.Checks, budgetCheck(bud, rep.Budget))
	}
	if !cert.Passed() {
		return cert, nil // not timed: it will not be served
	}
	// Timed after its selection, as the search times, never by the
	// measurement that selected it.
	lat, checks, err := t.latencyChecks(ctx, job, c, job.Verify.Seed)
	if err != nil {
		return nil, fmt.Errorf("time %s: %w", tr.Key, err)
	}
	cert.Checks = append(cert.Checks, checks...)
	cert.Latency = lat
	return cert, nil
}

// errorBound is the error_bound check of b: not made, and saying why, where
// the evaluator had no outputs to bound.
func errorBound(b evaluate.ErrorBoundResult) certs.Check {
	if b.NotChecked != "" {
		return certs.Check{Name: "error_bound", NotChecked: b.NotChecked}
	}
	return certs.Check{
		Name: "error_bound", Passed: b.Passed,
		Inputs:  map[string]any{"formula": b.Formula},
		Results: map[string]any{"bound": b.Bound, "measured_err": b.Measured, "max_ratio": b.Ratio},
	}
}

// budgetCheck is the error_budget check: the precision map, each stage's
// bound, the composed bound and the measured error against the budget.
// A budget the evaluator could not check fails (a job with a budget
// serves only a config whose error is bounded within it).
func budgetCheck(bud evaluate.ErrorBudget, b evaluate.BudgetResult) certs.Check {
	ch := certs.Check{
		Name:   "error_budget",
		Inputs: map[string]any{"kind": bud.Kind, "budget": bud.Value},
	}
	if b.Kind == "" || b.NotChecked != "" {
		ch.Note = "not checked: " + cmp.Or(b.NotChecked, "the evaluator bounds no error")
		return ch
	}
	stages := make([]any, len(b.Stages))
	for i, st := range b.Stages {
		m := map[string]any{"stage": st.Stage, "value": st.Value, "bound": st.Bound, "formula": st.How}
		if st.Param != "" {
			m["param"] = st.Param
		}
		stages[i] = m
	}
	pm := make(map[string]any, len(b.Map))
	for k, v := range b.Map {
		pm[k] = v
	}
	ch.Inputs["precision_map"] = pm
	ch.Passed = b.Passed
	ch.Results = map[string]any{"bound": b.Bound, "measured_err": b.Measured, "stages": stages, "at": b.At}
	return ch
}

// certMeta is what the store keeps of cert beside its bytes: its median
// latency with the median's interval, and its speed-up check's ratio.
func certMeta(cert *certs.Certificate) store.CertMeta {
	m := store.CertMeta{ID: cert.ID, Key: cert.Key, TimeMS: cert.Latency.MedianMS, IssuedAt: cert.IssuedAt,
		CILowMS: cert.Latency.CILowMS, CIHighMS: cert.Latency.CIHighMS}
	for _, ch := range cert.Checks {
		if ch.Name != "speedup" || ch.NotMade() != "" {
			continue
		}
		f := func(m map[string]any, k string) float64 { v, _ := m[k].(float64); return v }
		b, _ := ch.Inputs["baseline"].(string)
		n, ok := ch.Inputs["rounds"].(int)
		if !ok {
			n = int(f(ch.Inputs, "rounds"))
		}
		m.Speedup = &store.Speedup{Baseline: b, Ratio: f(ch.Results, "ratio"), Low: f(ch.Results, "ci95_low"), High: f(ch.Results, "ci95_high"), Rounds: n}
	}
	return m
}

func latency(l evaluate.LatencyResult) certs.Latency {
	return certs.Latency{
		Samples: len(l.TimesMS), MedianMS: l.MedianMS, P95MS: l.P95MS,
		CILowMS: l.CILowMS, CIHighMS: l.CIHighMS, TimesMS: l.TimesMS,
	}
}

func failedChecks(c *certs.Certificate) string {
	var out []string
	for _, ch := range c.Checks {
		if !ch.Passed && ch.NotMade() == "" {
			s := ch.Name
			if ch.Note != "" {
				s += ": " + ch.Note
			} else if w, ok := ch.Results["worst"].(string); ok && w != "" {
				s += ": worst " + w
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "failed"
	}
	return fmt.Sprint(out)
}

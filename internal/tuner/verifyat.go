package tuner

import (
	"context"
	"errors"
	"fmt"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/store"
)

// Verdict is what VerifyAt decided of one config at one job.
type Verdict struct {
	Passed bool
	Cert   string  // the certificate signed at the job, when passed
	TimeMS float64 // its certified median latency at the job's problem
	Why    string  // the checks that failed, when not passed
}

// ErrNotVerifiable is returned by VerifyAt for a job whose evaluator has
// no outputs to check (a replayed recording): nothing can be certified
// at a problem it never measured.
var ErrNotVerifiable = errors.New("the evaluator cannot verify outputs")

// VerifyAt verifies config key, tuned at another problem, at job's
// problem, with the checks a certification makes (parity against the
// reference, determinism, error bound where the evaluator has one, the
// constraints of job's space), so that a nearest answer may be called
// certified there. On a pass it signs the certificate and stores it under
// job; on a failure it records the config's trial at job as wrong_result
// with the checks that failed, which is what later lookups read. It serves
// nothing: the job's served config is its own cycles' to set.
func (t *Tuner) VerifyAt(ctx context.Context, job Job, key string) (Verdict, error) {
	st := t.cfg.Store
	if t.cfg.Signer == nil {
		return Verdict{}, ErrNoSigner
	}
	cert, v, err := t.checkAt(ctx, job, key)
	if cert == nil || err != nil {
		return v, err
	}
	if err := certs.Sign(cert, t.cfg.Signer); err != nil {
		return Verdict{}, fmt.Errorf("sign: %w", err)
	}
	body, err := cert.Encode()
	if err != nil {
		return Verdict{}, fmt.Errorf("encode certificate: %w", err)
	}
	meta := certMeta(cert)
	if err := st.PutCert(job.Key, meta, body); err != nil {
		return Verdict{}, fmt.Errorf("store certificate: %w", err)
	}
	t.cfg.Log.Info().Str("job_id", job.Key.String()).Str("config", key).Str("cert", cert.ID).Msg("verified at this problem")
	return Verdict{Passed: true, Cert: cert.ID, TimeMS: meta.TimeMS}, nil
}

// rejectAt records that config key failed verification at job.
func (t *Tuner) rejectAt(job Job, key, why string) (Verdict, error) {
	st := t.cfg.Store
	tr := store.Trial{Key: key, Status: string(evaluate.StatusWrongResult), Error: why, At: t.cfg.Now()}
	n, err := st.AddTrials(job.Key, []store.Trial{tr})
	if err == nil && n == 0 {
		err = st.MarkTrial(job.Key, key, tr.Status, why) // measured here before
	}
	if err != nil {
		return Verdict{}, fmt.Errorf("record %s wrong_result: %w", key, err)
	}
	t.cfg.Log.Warn().Str("job_id", job.Key.String()).Str("config", key).Str("failed", why).Msg("verification at this problem failed; config marked wrong_result")
	return Verdict{Why: why}, nil
}

// Recheck verifies config key of job again with the checks its
// certification made, to test a report that it fails: it signs and
// stores no certificate. A config that fails is recorded wrong_result at
// job, as VerifyAt records one, so no cycle certifies it again; one that
// passes changes nothing stored.
func (t *Tuner) Recheck(ctx context.Context, job Job, key string) (Verdict, error) {
	cert, v, err := t.checkAt(ctx, job, key)
	if cert == nil || err != nil {
		return v, err
	}
	return Verdict{Passed: true, TimeMS: cert.Latency.MedianMS}, nil
}

// checkAt runs the certification's checks of config key at job: the
// certificate when they pass, else nil and the verdict of a config
// recorded wrong_result (or an error).
func (t *Tuner) checkAt(ctx context.Context, job Job, key string) (*certs.Certificate, Verdict, error) {
	if _, ok := job.Evaluator.(evaluate.Verifier); !ok {
		return nil, Verdict{}, ErrNotVerifiable
	}
	reject := func(why string) (*certs.Certificate, Verdict, error) {
		v, err := t.rejectAt(job, key, why)
		return nil, v, err
	}
	// Not a config of this problem's space: nothing to run.
	c, err := job.Space.ParseKey(key)
	if err != nil {
		return reject(fmt.Sprintf("not a config of problem %s: %v", job.Key.Problem, err))
	}
	if err := job.Space.Check(c); err != nil {
		return reject(fmt.Sprintf("constraints: %v", err))
	}
	cert, err := t.verify(ctx, job, store.Trial{Key: key})
	if err != nil {
		return nil, Verdict{}, err
	}
	if !cert.Passed() {
		return reject(failedChecks(cert))
	}
	return cert, Verdict{}, nil
}

package daemon

import (
	"fmt"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/internal/store"
)

// errorReport is an error a runtime saw in a config's output against a
// reference of its own, in the unit of the job's error budget.
type errorReport struct {
	j      *job
	key    string
	err    float64
	source string
	n      int // reports it stands for (the largest error of n)
}

// checkError revokes the live certificate of the reported config when
// the error is above the bound its error_budget check certified (or the
// budget, where the bound is 0): the job falls back to its next certified
// config, or the default, and a re-tune is queued, which certifies no
// revoked config again. A config with no such certificate is left alone.
// why is the evidence the daemon acts on (evidence.go). It returns the
// revoked certificate's id, or "".
func (s *server) checkError(rep errorReport, why string) (string, error) {
	m, kind, limit, ok, err := s.liveBound(rep)
	if err != nil || !ok || rep.err <= limit {
		return "", err
	}
	reason := fmt.Sprintf("error: a runtime observed a %s error of %.4g in %s, above its certified bound of %.4g", kind, rep.err, rep.key, limit)
	if rep.source != "" {
		reason = fmt.Sprintf("error: runtime %q observed a %s error of %.4g in %s, above its certified bound of %.4g", rep.source, kind, rep.err, rep.key, limit)
	}
	if why != "" {
		reason += "; " + why
	}
	if _, err := s.revoke(m.ID, reason, runRequest{trigger: "error"}); err != nil {
		return "", err
	}
	if s.metrics != nil {
		s.metrics.errorRevoked(rep.j.key.Kernel)
	}
	return m.ID, nil
}

// liveBound is the live certificate of rep's config at its job and the
// largest error it certified; ok is false when there is none, or it
// certified no error budget.
func (s *server) liveBound(rep errorReport) (meta store.CertMeta, kind string, limit float64, ok bool, err error) {
	metas, err := s.st.JobCerts(rep.j.key)
	if err != nil {
		return meta, "", 0, false, err
	}
	for _, m := range metas {
		if m.Revoked || m.Key != rep.key {
			continue
		}
		body, _, err := s.st.Cert(m.ID)
		if err != nil {
			return meta, "", 0, false, err
		}
		cert, err := certs.Decode(body)
		if err != nil {
			return meta, "", 0, false, fmt.Errorf("certificate %s: %w", m.ID, err)
		}
		kind, limit, ok := budgetLimit(cert)
		return m, kind, limit, ok, nil
	}
	return meta, "", 0, false, nil
}

// budgetLimit is the largest error a certificate's passed error_budget
// check allows: its composed bound, or the budget where no bound above 0
// was recorded. ok is false when the certificate certified no budget.
func budgetLimit(c *certs.Certificate) (kind string, limit float64, ok bool) {
	for _, ch := range c.Checks {
		if ch.Name != "error_budget" || !ch.Passed {
			continue
		}
		budget, _ := ch.Inputs["budget"].(float64)
		kind, _ = ch.Inputs["kind"].(string)
		bound, _ := ch.Results["bound"].(float64)
		if bound > 0 && (budget <= 0 || bound < budget) {
			return kind, bound, true
		}
		if budget > 0 {
			return kind, budget, true
		}
	}
	return "", 0, false
}

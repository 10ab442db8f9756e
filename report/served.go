package report

import (
	"fmt"
	"strings"

	"github.com/quasim/quasim/api"
)

// servedCert is a job's served time beside its served certificate's
// measured median.
type servedCert struct {
	certID     string
	servedMS   float64 // api.Config.TimeMS: its certificate's median, where quasimd measured it so
	medianMS   float64 // the certificate's median latency
	loMS, hiMS float64 // its 95% CI; both the median when the body was not fetched
	haveCI     bool
	flag       bool    // servedMS outside [loMS, hiMS], or not the median where there is no CI
	ratio      float64 // servedMS / medianMS
}

// servedAgainstCert compares j's served time with the certificate it is
// served under; false when either is unknown.
func servedAgainstCert(j *job) (servedCert, bool) {
	s := j.served
	if s == nil || !(s.TimeMS > 0) {
		return servedCert{}, false
	}
	var c *Cert
	for i := range j.certs {
		if (s.Certificate != "" && j.certs[i].ID == s.Certificate) || (s.Certificate == "" && j.certs[i].Served) {
			c = &j.certs[i]
			break
		}
	}
	if c == nil {
		return servedCert{}, false
	}
	r := servedCert{certID: c.ID, servedMS: s.TimeMS, medianMS: c.TimeMS}
	r.loMS, r.hiMS = r.medianMS, r.medianMS
	if l := c.Latency; l != nil && l.MedianMS > 0 {
		r.medianMS = l.MedianMS
		r.loMS, r.hiMS = min(l.CILowMS, l.MedianMS), max(l.CIHighMS, l.MedianMS)
		r.haveCI = l.CILowMS > 0 && l.CIHighMS > 0
		if !r.haveCI {
			r.loMS, r.hiMS = r.medianMS, r.medianMS
		}
	}
	if !(r.medianMS > 0) {
		return servedCert{}, false
	}
	r.ratio = r.servedMS / r.medianMS
	// The served time is the certificate's median: one outside the
	// median's 95% interval is, at the 5% level, not a measurement of the
	// same distribution (a time from the search, or from another machine).
	r.flag = r.servedMS < r.loMS || r.servedMS > r.hiMS
	return r, true
}

// interval is the certificate's median with its CI, for a cell.
func (r servedCert) interval() string {
	if !r.haveCI {
		return num(r.medianMS)
	}
	return fmt.Sprintf("%s (%s–%s)", num(r.medianMS), num(r.loMS), num(r.hiMS))
}

// flagText says why a disagreement is flagged, in a sentence.
func (r servedCert) flagText() string {
	ci := "equal to its median (its interval was not fetched)"
	if r.haveCI {
		ci = fmt.Sprintf("inside its 95%% CI %s–%s ms", num(r.loMS), num(r.hiMS))
	}
	return fmt.Sprintf("Served time and certificate disagree: the served %s ms is %s× the certificate's measured median %s ms; a served time measured as its certificate was lies %s. It was measured another way (the search's time, served by an older quasimd) or on another machine; quasimctl tune re-verifies.",
		num(r.servedMS), num(r.ratio), num(r.medianMS), ci)
}

// servedFlag writes the flag of a disagreement, if any.
func servedFlag(b *strings.Builder, j *job) {
	if r, ok := servedAgainstCert(j); ok && r.flag {
		fmt.Fprintf(b, `<p class="flag served-flag" data-ratio="%s">%s</p>`, num(r.ratio), esc(r.flagText()))
	}
}

// speedup is a paired speed-up with its interval, for a cell.
func speedup(x *api.Speedup) string {
	return fmt.Sprintf("%s× (%s–%s)", num(x.Ratio), num(x.Low), num(x.High))
}

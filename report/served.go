package report

import (
	"fmt"
	"strings"
)

// servedSlack widens the served certificate's interval before the served
// time is compared with it. The interval (a bootstrap 95% CI of the
// median) covers the sampling noise of the verification's own samples;
// the served time is the search's measurement of the same config, taken
// at another moment, when the machine's load and clocks may differ. A
// factor of 1.25 on each side is a choice, not a measurement: it lets the
// usual drift between two quiet sessions pass and flags a served time
// that a busy or throttled session made a quarter or more off.
const servedSlack = 1.25

// servedCert is a job's served time beside its served certificate's
// measured median.
type servedCert struct {
	certID           string
	servedMS         float64 // api.Config.TimeMS: the search's time of the config
	medianMS         float64 // the certificate's median latency
	loMS, hiMS       float64 // its 95% CI; both the median when the body was not fetched
	haveCI           bool
	flag             bool    // servedMS outside [loMS/servedSlack, hiMS·servedSlack]
	ratio            float64 // servedMS / medianMS
	allowLo, allowHi float64
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
	r.allowLo, r.allowHi = r.loMS/servedSlack, r.hiMS*servedSlack
	r.flag = r.servedMS < r.allowLo || r.servedMS > r.allowHi
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
	ci := "its median"
	if r.haveCI {
		ci = fmt.Sprintf("its 95%% CI %s–%s ms", num(r.loMS), num(r.hiMS))
	}
	return fmt.Sprintf("Served time and certificate disagree: the served %s ms is %s× the certificate's measured median %s ms, outside %s widened by ×%s (%s–%s ms). One of the two was measured on a busier, hotter or differently clocked machine; which one holds now needs a new measurement (quasimctl tune re-verifies).",
		num(r.servedMS), num(r.ratio), num(r.medianMS), ci, num(servedSlack), num(r.allowLo), num(r.allowHi))
}

// servedFlag writes the flag of a disagreement, if any.
func servedFlag(b *strings.Builder, j *job) {
	if r, ok := servedAgainstCert(j); ok && r.flag {
		fmt.Fprintf(b, `<p class="flag served-flag" data-ratio="%s">%s</p>`, num(r.ratio), esc(r.flagText()))
	}
}

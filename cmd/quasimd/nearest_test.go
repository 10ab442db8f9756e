package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/testload"
)

// A nearest answer says its certificate is another problem's, and the
// daemon verifies the config at the problem asked for: once it passes,
// the answer is certified there, by a certificate that verifies offline,
// and it stays so after a restart without being verified again.
func TestNearestVerified(t *testing.T) {
	t.Parallel()
	// One block, float64 sums and one worker: every config of 65536 is one
	// of 30000's too, and sums it within the default tolerance.
	spec := reduceSpec + "parameters: {block: [16384], acc: [float64], workers: [1]}\n"
	dir := newDir(t, map[string]string{"reduce.yaml": spec})
	d := start(t, dir)
	served := waitServed(t, d, "65536")
	out, _, code := d.ctl("config", "reduce", "--problem", "30000")
	if code != 0 || !strings.Contains(out, served.Certificate+" (issued for problem 65536, not verified at this one)") ||
		!strings.Contains(out, "verification:  pending") {
		t.Fatalf("config at 30000 (exit %d) does not say its certificate is 65536's and pending:\n%s", code, out)
	}
	var c api.Config
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for {
		c = api.Config{} // JSON leaves the fields an answer omits as they were
		d.ctlJSON(&c, "config", "reduce", "--problem", "30000")
		if c.Verification != api.VerifyPending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("verification at 30000 still pending after 60s: %+v", c)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c.Match != api.MatchNearest || c.From != "65536" || c.Verification != api.VerifyPassed || c.CertifiedFor != "30000" ||
		c.Key != served.Key || c.Certificate == "" || c.Certificate == served.Certificate || !(c.TimeMS > 0) || c.DefaultMS != 0 {
		t.Fatalf("after verification at 30000: %+v, want 65536's config certified for 30000 by a new certificate, timed there", c)
	}
	if out, errs, code := d.ctl("certs", "verify", c.Certificate); code != 0 || !strings.Contains(out, "30000") {
		t.Errorf("certs verify %s = exit %d:\n%s%s", c.Certificate, code, out, errs)
	}
	if out, _, _ := d.ctl("config", "reduce", "--problem", "30000"); strings.Contains(out, "not verified at this one") ||
		!strings.Contains(out, "verification:  passed") {
		t.Errorf("config at 30000 after verification:\n%s", out)
	}
	if out, _, _ := d.ctl("kernels"); !strings.Contains(out, fmt.Sprintf("reduce 30000: added by a lookup of uid %d", os.Getuid())) ||
		!strings.Contains(out, "(a nearest answer's config verified there)") {
		t.Errorf("quasimctl kernels does not say who asked for the verification at 30000:\n%s", out)
	}
	d.stop()
	d = start(t, dir)
	var again api.Config
	d.ctlJSON(&again, "config", "reduce", "--problem", "30000")
	if again.Certificate != c.Certificate || again.Verification != api.VerifyPassed || again.CertifiedFor != "30000" {
		t.Errorf("after a restart: %+v, want certificate %s, passed", again, c.Certificate)
	}
	if strings.Contains(d.stderr.String(), "verification at the problem asked for queued") {
		t.Errorf("a restart verified 30000 again:\n%s", tail(d.stderr.String(), 2000))
	}
}

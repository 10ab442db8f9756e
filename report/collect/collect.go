package collect

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/report"
)

// Collect gathers what the report draws of the named kernels (all when
// none are named) from the daemon c reaches, telling progress on w: a
// line per page of trials when a kernel has more than one.
func Collect(ctx context.Context, c *client.Client, names []string, w io.Writer) (report.Input, error) {
	st, err := c.Status(ctx)
	if err != nil {
		return report.Input{}, err
	}
	ks, err := c.Kernels(ctx)
	if err != nil {
		return report.Input{}, err
	}
	in := report.Input{Source: fmt.Sprintf("quasimd %s, state %s, via %s", st.Version, st.StateDir, c.Dialed()), Generated: time.Now()}
	if d, err := c.Devices(ctx); err == nil { // an older daemon may lack the ceilings; the roofline says so
		in.Ceilings, in.Device = d.CPU.Ceilings, d.CPU.Class
	}
	in.Pipelines = st.Pipelines
	for _, p := range st.Pipelines {
		cz, err := c.Causal(ctx, p.Name)
		if err != nil {
			if in.CausalErrors == nil {
				in.CausalErrors = map[string]string{}
			}
			in.CausalErrors[p.Name] = err.Error()
			continue
		}
		in.Causal = append(in.Causal, cz)
	}
	for _, n := range names {
		if !slices.ContainsFunc(ks, func(k api.Kernel) bool { return k.Name == n }) {
			return report.Input{}, fmt.Errorf("report: kernel %q: %w", n, api.ErrNotFound)
		}
	}
	for _, k := range ks {
		if len(names) > 0 && !slices.Contains(names, k.Name) {
			continue
		}
		rk, err := kernel(ctx, c, k, w)
		if err != nil {
			return report.Input{}, fmt.Errorf("report: kernel %s: %w", k.Name, err)
		}
		in.Kernels = append(in.Kernels, rk)
	}
	return in, nil
}

// kernel gets one kernel's trials (page by page), cycles and
// certificates, decoding the served certificates' checks.
func kernel(ctx context.Context, c *client.Client, k api.Kernel, w io.Writer) (report.Kernel, error) {
	rk := report.Kernel{Info: k, Trials: []api.Trial{}}
	cursor := ""
	for pages := 1; ; pages++ {
		page, err := c.TrialsPage(ctx, k.Name, "", api.MaxTrialsLimit, cursor)
		if err != nil {
			return rk, err
		}
		rk.Params = page.Params
		rk.Trials = append(rk.Trials, page.Trials...)
		if page.Next == "" {
			if pages > 1 {
				fmt.Fprintf(w, "%s: %d trials fetched, done\n", k.Name, len(rk.Trials))
			}
			break
		}
		if page.Next == cursor {
			return rk, fmt.Errorf("trials: the daemon sent cursor %q again", cursor)
		}
		fmt.Fprintf(w, "%s: %d trials fetched, more follow\n", k.Name, len(rk.Trials))
		cursor = page.Next
	}
	cy, err := c.Cycles(ctx, k.Name)
	if err != nil {
		return rk, err
	}
	rk.Cycles = cy.Cycles
	cs, err := c.Certs(ctx, k.Name)
	if err != nil {
		return rk, err
	}
	for _, s := range cs.Certs {
		rc := report.Cert{CertSummary: s}
		if s.Served {
			body, _, err := c.Cert(ctx, s.ID)
			if err != nil {
				return rk, fmt.Errorf("certificate %s: %w", s.ID, err)
			}
			cert, err := certs.Decode(body)
			if err != nil {
				return rk, fmt.Errorf("certificate %s: %w", s.ID, err)
			}
			for _, ch := range cert.Checks {
				rc.Checks = append(rc.Checks, report.Check{Name: ch.Name, Passed: ch.Passed, NotChecked: ch.NotChecked, Inputs: ch.Inputs, Results: ch.Results, Note: ch.Note})
			}
			l := cert.Latency
			rc.Latency = &report.Latency{Samples: l.Samples, MedianMS: l.MedianMS, CILowMS: l.CILowMS, CIHighMS: l.CIHighMS}
		}
		rk.Certs = append(rk.Certs, rc)
	}
	return rk, nil
}

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/client"
	htmlreport "github.com/quasim/quasim/report"
)

type reportOptions struct {
	output string
	title  string
}

func newReportCommand(g *globalOptions) *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report [KERNEL...] [-o FILE]",
		Short: "Write an HTML report of the tuning: convergence, portfolio, parameters, Pareto front, certificates",
		Long: `report fetches every trial, cycle and certificate of each KERNEL (default:
every kernel) from quasimd and writes one self-contained HTML page that
opens offline: per job, the best time against evaluations across all
cycles with the default's time and the served config marked, what each
portfolio member proposed per cycle, the effect and importance of each
parameter, the (time, energy) Pareto front where trials carry energy, the
certificates with the served one's checks, and every trial in a sortable
table. Trials come page by page; with more than one page, progress goes to
stderr.`,
		Example: `  quasimctl report -o report.html
  quasimctl report sgemm conv2d -o tuning.html
  quasimctl import gemm_cache.json.gz --kernel gemm && quasimctl report gemm -o gemm.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, g, o, args)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "report.html", "write the page to FILE (- for stdout)")
	cmd.Flags().StringVar(&o.title, "title", "", "the page's title (default: quasim tuning report)")
	return cmd
}

func runReport(cmd *cobra.Command, g *globalOptions, o reportOptions, names []string) error {
	ctx := cmd.Context()
	c := g.client(cmd)
	in, err := fetchReport(ctx, c, names, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	in.Title = o.title
	var b bytes.Buffer
	if err := htmlreport.Write(&b, in); err != nil {
		return err
	}
	if o.output == "-" {
		_, err := cmd.OutOrStdout().Write(b.Bytes())
		return err
	}
	if err := os.WriteFile(o.output, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	trials := 0
	for _, k := range in.Kernels {
		trials += len(k.Trials)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d bytes): %d kernels, %d trials\n", o.output, b.Len(), len(in.Kernels), trials)
	return nil
}

// fetchReport gathers what the report draws for the named kernels (all
// when none are named), telling progress on w.
func fetchReport(ctx context.Context, c *client.Client, names []string, w io.Writer) (htmlreport.Input, error) {
	st, err := c.Status(ctx)
	if err != nil {
		return htmlreport.Input{}, err
	}
	ks, err := c.Kernels(ctx)
	if err != nil {
		return htmlreport.Input{}, err
	}
	in := htmlreport.Input{Source: fmt.Sprintf("quasimd %s, state %s, via %s", st.Version, st.StateDir, c.Dialed()), Generated: time.Now()}
	for _, n := range names {
		if !slices.ContainsFunc(ks, func(k api.Kernel) bool { return k.Name == n }) {
			return htmlreport.Input{}, fmt.Errorf("report: kernel %q: %w", n, api.ErrNotFound)
		}
	}
	for _, k := range ks {
		if len(names) > 0 && !slices.Contains(names, k.Name) {
			continue
		}
		rk, err := fetchKernel(ctx, c, k, w)
		if err != nil {
			return htmlreport.Input{}, fmt.Errorf("report: kernel %s: %w", k.Name, err)
		}
		in.Kernels = append(in.Kernels, rk)
	}
	return in, nil
}

// fetchKernel gets one kernel's trials (page by page), cycles and
// certificates, decoding the served certificates' checks.
func fetchKernel(ctx context.Context, c *client.Client, k api.Kernel, w io.Writer) (htmlreport.Kernel, error) {
	rk := htmlreport.Kernel{Info: k, Trials: []api.Trial{}}
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
		rc := htmlreport.Cert{CertSummary: s}
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
				rc.Checks = append(rc.Checks, htmlreport.Check{Name: ch.Name, Passed: ch.Passed, NotChecked: ch.NotChecked, Inputs: ch.Inputs, Results: ch.Results, Note: ch.Note})
			}
			l := cert.Latency
			rc.Latency = &htmlreport.Latency{Samples: l.Samples, MedianMS: l.MedianMS, CILowMS: l.CILowMS, CIHighMS: l.CIHighMS}
		}
		rk.Certs = append(rk.Certs, rc)
	}
	return rk, nil
}

package cli

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/internal/memplan"
	"github.com/quasim/quasim/memgraph/onnx"

	htmlreport "github.com/quasim/quasim/report"
	"github.com/quasim/quasim/report/collect"
)

type reportOptions struct {
	output   string
	title    string
	memgraph []string
	dims     onnx.Options // --dim, --value and --unknown of the --memgraph ONNX graphs
}

func newReportCommand(g *globalOptions) *cobra.Command {
	o := reportOptions{dims: onnx.Options{Dims: dimFlag{}, Values: valueFlag{}}}
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
table; the roofline of the builtin kernels under the ceilings quasimd
measured; each declared pipeline's causal profile; and, with --memgraph,
memory plans of graphs. Trials come page by page; with more than one page,
progress goes to stderr.`,
		Example: `  quasimctl report -o report.html
  quasimctl report sgemm conv2d -o tuning.html
  quasimctl import gemm_cache.json.gz --kernel gemm && quasimctl report gemm -o gemm.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, g, o, args)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "report.html", "write the page to FILE (- for stdout)")
	cmd.Flags().StringVar(&o.title, "title", "", "the page's title (default: quasim tuning report)")
	cmd.Flags().StringArrayVar(&o.memgraph, "memgraph", nil, "add the memory plan of this graph (memgraph JSON, .onnx or .tflite; repeatable), planned by quasimd or offline")
	cmd.Flags().Var(dimFlag(o.dims.Dims), "dim", "with --memgraph: value of an ONNX symbolic dimension, NAME=VALUE, or of dim K of graph input TENSOR, TENSOR[K]=VALUE (repeatable)")
	cmd.Flags().Var(valueFlag(o.dims.Values), "value", "with --memgraph: "+valueUsage)
	cmd.Flags().Int64Var(&o.dims.Unknown, "unknown", 0, "with --memgraph: value of every ONNX graph input dimension still unknown (0: such a dimension is an error)")
	return cmd
}

func runReport(cmd *cobra.Command, g *globalOptions, o reportOptions, names []string) error {
	ctx := cmd.Context()
	c := g.client(cmd)
	in, err := collect.Collect(ctx, c, names, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	in.Title = o.title
	for _, f := range o.memgraph {
		p, where, err := planFile(cmd, g, f, o.dims, memplan.Options{Seed: 1}, client.MemPlanOptions{Seed: 1}, false, 5*time.Second)
		if err != nil {
			return fmt.Errorf("report: --memgraph %s: %w", f, err)
		}
		in.MemPlans = append(in.MemPlans, htmlreport.MemPlan{File: f, Where: where, Plan: p})
	}
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
	sum := reportSummary{File: o.output, Bytes: b.Len(), Kernels: len(in.Kernels)}
	for _, k := range in.Kernels {
		sum.Trials += len(k.Trials)
	}
	if g.json {
		return printJSON(cmd.OutOrStdout(), sum)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d bytes): %d kernels, %d trials\n", sum.File, sum.Bytes, sum.Kernels, sum.Trials)
	return nil
}

// reportSummary is what report --json prints.
type reportSummary struct {
	File    string `json:"file"`
	Bytes   int    `json:"bytes"`
	Kernels int    `json:"kernels"`
	Trials  int    `json:"trials"`
}

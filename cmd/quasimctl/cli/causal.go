package cli

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/internal/causalview"
	"github.com/quasim/quasim/internal/gzread"
)

// maxTraceBytes bounds what causal import reads of a trace (after gunzip).
const maxTraceBytes = 1 << 30

// postSpans is how many spans causal import sends in one request (about
// 200 bytes of JSON each: well inside api.MaxBodyBytes).
const postSpans = 20000

func newCausalCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "causal",
		Short: "Profile kernel pipelines: which kernel to tune, and what it would buy end to end",
		Long: `causal shows what quasimd's model says of a declared pipeline (a pipeline
file in the spec dir) from the spans runtimes posted: each kernel's share of
an iteration's end-to-end time, its share on the critical path, its influence
(end-to-end time saved per kernel time saved, Coz's virtual speedup near 0),
and the end-to-end gain predicted with the kernel at its tuned time (its
job's best trial against its default config's). Each is the median over the
recorded iterations with a 95% bootstrap interval of the median in brackets.
Slack is how much longer the kernel's spans may take before an iteration's
end-to-end time grows (0 on the critical path), with its range over the
iterations in parentheses when that is wider than the interval.

  quasimctl causal show PIPELINE [--curves] [--json]
  quasimctl causal import TRACE.json[.gz] --pipeline PIPELINE [--offline [--end gpu]]
  quasimctl causal check PIPELINE [--runs N] [--baseline | --last]`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newCausalShowCommand(g), newCausalImportCommand(g), newCausalCheckCommand(g))
	return cmd
}

func newCausalShowCommand(g *globalOptions) *cobra.Command {
	var curves bool
	cmd := &cobra.Command{
		Use:   "show PIPELINE",
		Short: "Show a pipeline's kernels by influence on its end-to-end time",
		Args:  exactArgs(1, "PIPELINE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client(cmd).Causal(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), c)
			}
			return printCausal(cmd.OutOrStdout(), c, curves)
		},
	}
	cmd.Flags().BoolVar(&curves, "curves", false, "also print each kernel's virtual-speedup curve (the JSON always holds them)")
	return cmd
}

func newCausalImportCommand(g *globalOptions) *cobra.Command {
	var (
		pipeline  string
		offline   bool
		curves    bool
		inputDims bool
		end       string
	)
	cmd := &cobra.Command{
		Use:   "import TRACE",
		Short: "Read a Chrome trace (PyTorch profiler, Perfetto) and post its spans, or profile it offline",
		Long: `import reads a Chrome trace event file (JSON, or gzipped JSON when it ends
in .gz), as torch.profiler's export_chrome_trace and Perfetto write it, maps
its events to spans (see the causal package: complete and begin/end events
on each thread or stream, flow events as dependencies, ProfilerStep#N as
iterations) and says what it mapped and what it dropped, and why. Then it
posts the spans to quasimd's pipeline --pipeline (declared by a pipeline
file in the spec dir), or with --offline shows the table without a daemon
(gains at tuned times need the daemon's trials, so offline they are unknown).

An iteration's end-to-end time runs to its end: with ProfilerStep#N, the
next step's start, which the host reaches. --end gpu (with --offline)
measures each step to its last GPU op instead, with the GPU work a step
launched kept in that step wherever it ran: which kernels bound when the
step's GPU work is done, where the host, not the GPU, ends the step (what
Holistic Trace Analysis's critical path shows).`,
		Args: exactArgs(1, "TRACE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pipeline == "" {
				if !offline {
					return usagef("--pipeline is needed to post spans (or use --offline)")
				}
				pipeline = "trace"
			}
			switch {
			case end != "step" && end != "gpu":
				return usagef("--end %q: want step (each iteration to its end) or gpu (each step to its last GPU op)", end)
			case end == "gpu" && !offline:
				return usagef("--end gpu needs --offline: quasimd's causal show measures each iteration to its end")
			}
			// Bad input exits 2, as memgraph plan's does (the exit code table).
			// Read as it goes: the trace's text is never held whole.
			r, err := gzread.Open(args[0], maxTraceBytes)
			if err != nil {
				return badInput(err)
			}
			spans, rep, err := causal.ImportChromeFrom(r, pipeline, causal.ChromeOptions{InputDims: inputDims, ToGPUEnd: end == "gpu"})
			r.Close()
			w := cmd.OutOrStdout()
			if err != nil {
				if rep.Events > 0 && !g.json {
					printChromeReport(w, args[0], rep) // what was read says why nothing was kept
				}
				return badInput(fmt.Errorf("%s: %w", args[0], err))
			}
			if !g.json {
				printChromeReport(w, args[0], rep)
			}
			if len(spans) == 0 {
				return badInput(fmt.Errorf("%s: no spans to profile", args[0]))
			}
			if offline {
				iters, skipped := causalview.Split([]causalview.Batch{{Label: args[0], Spans: spans}})
				var sink func(causal.Span) bool
				if end == "gpu" {
					if len(rep.GPUTracks) == 0 {
						return badInput(fmt.Errorf("%s: --end gpu: the trace has no GPU work (kernel, gpu_memcpy, gpu_memset)", args[0]))
					}
					sink = rep.GPUWork
				}
				c, err := causalview.ProfileTo(pipeline, 1, iters, skipped, causalview.Tuned{}, sink)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(w, struct {
						Import api.ImportReport `json:"import"`
						End    string           `json:"end"`
						Causal api.Causal       `json:"causal"`
					}{importReport(rep), end, c})
				}
				fmt.Fprintln(w)
				if sink != nil {
					printGPUEnd(w, iters, sink)
				}
				if err := printCausal(w, c, curves); err != nil {
					return err
				}
				fmt.Fprintln(w, "offline, gains at tuned times are unknown: they need quasimd's trials (post the spans, then causal show)")
				return nil
			}
			var posted []api.SpansResponse
			for _, b := range chunks(spans, postSpans) {
				r, err := g.client(cmd).PostSpans(cmd.Context(), b)
				if err != nil {
					return fmt.Errorf("post spans %d to %d of %d: %w", len(posted)*postSpans, len(posted)*postSpans+len(b), len(spans), err)
				}
				posted = append(posted, r)
			}
			if g.json {
				return printJSON(w, struct {
					Import api.ImportReport    `json:"import"`
					Posted []api.SpansResponse `json:"posted"`
				}{importReport(rep), posted})
			}
			dropped := 0
			for _, r := range posted {
				dropped += r.DroppedSpans
			}
			fmt.Fprintf(w, "posted %s in %s to pipeline %s", plural(len(spans), "span"), plural(len(posted), "batch"), pipeline)
			if dropped > 0 {
				fmt.Fprintf(w, "; its retention dropped %d older spans", dropped)
			}
			fmt.Fprintf(w, "\nsee: quasimctl causal show %s\n", pipeline)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&pipeline, "pipeline", "", "the declared pipeline to post the spans to (offline: the name shown; default trace)")
	fs.BoolVar(&offline, "offline", false, "profile the trace here and show the table; post nothing, need no daemon")
	fs.BoolVar(&curves, "curves", false, "with --offline, also print each kernel's virtual-speedup curve")
	fs.BoolVar(&inputDims, "input-dims", false, "a row per kernel and input dims where a kernel runs at several on several streams (default: a row per kernel name)")
	fs.StringVar(&end, "end", "step", "with --offline, where an iteration ends: step (its end: the next step's start) or gpu (each step's last GPU op, its GPU work kept in the step that launched it)")
	return cmd
}

// printGPUEnd says that the table is measured to each step's last GPU op,
// and of how many iterations (one without GPU work is measured to its end).
func printGPUEnd(w io.Writer, iters [][]causal.Span, gpu func(causal.Span) bool) {
	n := 0
	for _, it := range iters {
		if slices.ContainsFunc(it, gpu) {
			n++
		}
	}
	fmt.Fprintf(w, "end to end: each step's start to its last GPU op (--end gpu; the GPU work a step launched is its own wherever it ran), in %d of %s", n, plural(len(iters), "iteration"))
	if n < len(iters) {
		fmt.Fprint(w, "; the others have no GPU work and run to their end")
	}
	fmt.Fprintln(w)
}

// chunks splits spans into batches of at most n spans at iteration
// boundaries where it can (an iteration larger than n is one batch);
// dependencies on spans outside a batch are dropped, as the daemon's
// profile drops those across iterations.
func chunks(spans []causal.Span, n int) [][]causal.Span {
	var out [][]causal.Span
	start := 0
	for start < len(spans) {
		end := start
		for end < len(spans) {
			it := spans[end].Iteration
			next := end
			for next < len(spans) && spans[next].Iteration == it {
				next++
			}
			if next-start > n && end > start {
				break
			}
			end = next
		}
		out = append(out, inBatch(spans[start:end]))
		start = end
	}
	return out
}

// inBatch copies b with only the dependencies inside it.
func inBatch(b []causal.Span) []causal.Span {
	ids := make(map[uint64]bool, len(b))
	for _, s := range b {
		ids[s.ID] = true
	}
	out := make([]causal.Span, len(b))
	for i, s := range b {
		var deps []uint64
		for _, d := range s.Deps {
			if ids[d] {
				deps = append(deps, d)
			}
		}
		s.Deps = deps
		out[i] = s
	}
	return out
}

func importReport(r causal.ChromeReport) api.ImportReport {
	out := api.ImportReport{Events: r.Events, Spans: r.Spans, Deps: r.Deps, Waits: r.Waits, Iterations: r.Iterations,
		IterationsFrom: r.IterationsFrom, Tracks: r.Tracks, RepeatingTracks: r.RepeatingTracks,
		Gaps: api.ImportGaps{Event: r.Gaps.Event, Host: r.Gaps.Host, HostUnseen: r.Gaps.HostUnseen, Lag: r.Gaps.Lag}, Warning: r.Warning,
		CutOff: r.CutOff, Dropped: []api.ImportDropped{},
		Bind: api.ImportBind{ByLaunch: r.Bind.ByLaunch, GraphKernels: r.Bind.GraphKernels, Later: r.Bind.Later, ByOrder: r.Bind.ByOrder,
			ByTime: r.Bind.ByTime, Dropped: r.Bind.Dropped}}
	for _, st := range r.Steps {
		out.Steps = append(out.Steps, api.ImportStep{N: st.N, StartNs: st.Start, PeriodNs: st.Period, GPUBusyNs: st.GPUBusy,
			GPUBound: st.GPUBound, HostCalls: st.HostCalls, HostCallNs: st.HostCallTime})
	}
	for _, d := range r.Dropped {
		out.Dropped = append(out.Dropped, api.ImportDropped{Reason: d.Reason, Count: d.Count, Example: d.Example})
	}
	return out
}

func printChromeReport(w io.Writer, file string, r causal.ChromeReport) {
	var iters string
	switch r.IterationsFrom {
	case causal.FromMarkers:
		iters = fmt.Sprintf("%s (ProfilerStep#N)", plural(r.Iterations, "iteration"))
	case causal.FromRepeats:
		iters = fmt.Sprintf("%s (no ProfilerStep#N: inferred, the kernel sequence repeats on %d of %d streams and threads)", plural(r.Iterations, "iteration"), r.RepeatingTracks, r.Tracks)
	default:
		iters = "no iterations found"
	}
	fmt.Fprintf(w, "%s: %d events read; mapped %d spans, %d dependencies (%d from GPU waits), %s\n",
		filepath.Base(file), r.Events, r.Spans, r.Deps, r.Waits, iters)
	if r.Warning != "" {
		fmt.Fprintf(w, "warning: %s\n", r.Warning)
	}
	printSteps(w, r)
	if g := r.Gaps; g != (causal.GapReport{}) {
		fmt.Fprintf(w, "idle gaps on GPU streams (over %s), modelled as waits: %d on an earlier GPU span (dependency added), %d on a host call (dependency added), %d on a launch the trace does not show (starts no earlier), %d kept as lag (its launch returned before, nothing ended in the gap)\n",
			time.Duration(causal.MinGap), g.Event, g.Host, g.HostUnseen, g.Lag)
	}
	if r.CutOff {
		fmt.Fprintln(w, "the trace ends early (unterminated); its last partial event is not counted")
	}
	if len(r.Dropped) == 0 {
		fmt.Fprintln(w, "dropped: nothing")
		return
	}
	fmt.Fprintln(w, "dropped:")
	t := newTable(w, "  COUNT", "REASON", "FIRST")
	for _, d := range r.Dropped {
		t.row(fmt.Sprintf("  %d", d.Count), d.Reason, d.Example)
	}
	t.flush()
}

// printCausal writes a pipeline's profile as a table, kernels by influence.
func printCausal(w io.Writer, c api.Causal, curves bool) error {
	fmt.Fprintf(w, "pipeline %s: %s, %s (%s)", c.Pipeline, plural(c.Iterations, "iteration"), plural(c.Spans, "span"), plural(c.Batches, "batch"))
	if c.Iterations > 0 {
		ns := func(v float64) string { return time.Duration(v).String() }
		fmt.Fprintf(w, "; end to end %s [%s, %s]", ns(c.EndToEnd.Median), ns(c.EndToEnd.Lo), ns(c.EndToEnd.Hi))
	}
	fmt.Fprintln(w)
	pct := func(e api.Estimate) string {
		return fmt.Sprintf("%s [%s, %s]", fmtPct(e.Median), fmtPct(e.Lo), fmtPct(e.Hi))
	}
	t := newTable(w, "KERNEL", "SHARE", "CRITICAL PATH", "INFLUENCE", "SLACK", "GAIN IF TUNED", "MEASURED")
	var notes []string             // distinct notes, in kernel order
	noted := map[string][]string{} // note → kernels
	for _, k := range c.Kernels {
		gain := "unknown"
		if k.Gain != nil {
			gain = pct(*k.Gain)
		} else if k.TunedNote != "" {
			if noted[k.TunedNote] == nil {
				notes = append(notes, k.TunedNote)
			}
			noted[k.TunedNote] = append(noted[k.TunedNote], kernelLabel(k))
		}
		measured := "-"
		if m := k.Measured; m != nil {
			measured = fmt.Sprintf("%s [%s, %s] (predicted %s, %d runs)", fmtPct(m.Measured.Median), fmtPct(m.Measured.Lo), fmtPct(m.Measured.Hi), fmtPct(m.Predicted), m.Runs)
		}
		infl := fmt.Sprintf("%.3f [%.3f, %.3f]", k.Influence.Median, k.Influence.Lo, k.Influence.Hi)
		t.row(kernelLabel(k), pct(k.Share), pct(k.Critical), infl, fmtNs(k.Slack), gain, measured)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "gain unknown:")
		for _, n := range notes {
			fmt.Fprintf(w, "  %s: %s\n", strings.Join(noted[n], ", "), n)
		}
	}
	printCoverage(w, c)
	if len(c.Skipped) > 0 {
		fmt.Fprintln(w, "skipped:")
		for _, s := range c.Skipped {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if curves && len(c.Kernels) > 0 {
		fmt.Fprintln(w, "\nvirtual-speedup curves: end-to-end time saved (median) with the kernel x% faster")
		header := []string{"KERNEL"}
		for i := range c.Kernels[0].Curve {
			header = append(header, fmt.Sprintf("%.0f%%", float64(i)*c.CurveStep*100))
		}
		t := newTable(w, header...)
		for _, k := range c.Kernels {
			row := []string{kernelLabel(k)}
			for _, p := range k.Curve {
				row = append(row, fmtPct(p.Median))
			}
			t.row(row...)
		}
		return t.flush()
	}
	return nil
}

// kernelLabel names a profile's row: the kernel, with its problem when
// two stages run it.
func kernelLabel(k api.CausalKernel) string {
	if k.Problem == "" {
		return shortName(k.Kernel)
	}
	return shortName(k.Kernel) + " @ " + k.Problem
}

// maxNameLen is the most of a kernel name a table shows (GPU kernels'
// template names run to hundreds of characters); --json has them whole.
const maxNameLen = 64

func shortName(s string) string {
	if r := []rune(s); len(r) > maxNameLen {
		return string(r[:maxNameLen-1]) + "…"
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "ch") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// fmtNs writes a slack estimate in ns as a duration: the median and its
// interval, and the range over iterations when it is wider.
func fmtNs(e api.Estimate) string {
	d := func(v float64) string { return time.Duration(math.Round(v)).String() }
	s := fmt.Sprintf("%s [%s, %s]", d(e.Median), d(e.Lo), d(e.Hi))
	if e.Min < e.Lo || e.Max > e.Hi {
		s += fmt.Sprintf(" (%s to %s)", d(e.Min), d(e.Max))
	}
	return s
}

// fmtPct writes a fraction as a percentage with one decimal.
func fmtPct(v float64) string {
	s := fmt.Sprintf("%.1f%%", 100*v)
	if s == "-0.0%" {
		s = "0.0%"
	}
	return s
}

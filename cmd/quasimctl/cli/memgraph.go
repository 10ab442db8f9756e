package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/internal/memplan"
	"github.com/quasim/quasim/memgraph"
	"github.com/quasim/quasim/memgraph/onnx"
)

func newMemgraphCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memgraph",
		Short: "Plan where the tensors of a graph of kernels live in memory",
	}
	cmd.AddCommand(newMemgraphPlanCommand(g))
	return cmd
}

// dimFlag is --dim NAME=VALUE, repeatable.
type dimFlag map[string]int64

func (d dimFlag) String() string { return "" }
func (d dimFlag) Type() string   { return "NAME=VALUE" }
func (d dimFlag) Set(s string) error {
	name, v, err := onnx.ParseDim(s)
	if err == nil {
		d[name] = v
	}
	return err
}

// valueFlag is --value NAME=V[,V...], repeatable.
type valueFlag map[string][]int64

func (d valueFlag) String() string { return "" }
func (d valueFlag) Type() string   { return "NAME=V[,V...]" }
func (d valueFlag) Set(s string) error {
	name, v, err := onnx.ParseValue(s)
	if err == nil {
		d[name] = v
	}
	return err
}

// valueUsage is the help of --value.
const valueUsage = "value of an integer ONNX graph input the model is always run with, NAME=V[,V...] row-major (repeatable): an If whose condition follows from it takes one branch, and only that branch is planned"

func newMemgraphPlanCommand(g *globalOptions) *cobra.Command {
	var (
		offline  bool
		noSearch bool
		seed     uint64
		timeout  time.Duration
		top      int
		dims     = onnx.Options{Dims: dimFlag{}, Values: valueFlag{}}
		cache    string
		bw, capB string
		latency  time.Duration
		layout   bool
	)
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Plan a memory graph (memgraph JSON, .onnx or .tflite) via quasimd, or offline",
		Long: `Plan reads FILE (memgraph's JSON graph; an .onnx or .tflite model is
read here into that graph first) and asks quasimd for a plan: an offset
per tensor, the peak, the lower bound and the greedy baselines' peaks.
When no daemon answers it plans in this process instead, the same way,
and says so on stderr; --offline plans here without asking. quasimd
bounds what it plans (16 MiB, 100,000 tensors and ops); offline, only
memgraph's own limits apply.

--cache adds the plan's cache-miss estimate for a hierarchy
(SIZE/LINE/WAYS per level, first level first); --bandwidth adds the
prefetch schedule of the graph's host tensors over a copy stream of that
many bytes a second (--cap bounds the device bytes, --latency is paid per
copy). Ops that name a quasim kernel ("kernel", "problem") get that job's
best measured time from quasimd when their duration_ns is missing.`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt := memplan.Options{Seed: seed, NoSearch: noSearch}
			var err error
			if cache != "" {
				if opt.Cache, err = memplan.ParseCache(cache); err != nil {
					return fmt.Errorf("%w: --cache: %v", api.ErrInvalidArgument, err)
				}
			}
			if layout {
				if opt.Cache == nil {
					return fmt.Errorf("%w: --layout needs --cache (the layout lowers that cache's estimated misses)", api.ErrInvalidArgument)
				}
				opt.Layout = true
			}
			if bw != "" {
				pf := &memgraph.PrefetchOptions{LatencyNS: latency.Nanoseconds()}
				if pf.Bandwidth, err = memplan.ParseBytes(bw); err != nil {
					return fmt.Errorf("%w: --bandwidth: %v", api.ErrInvalidArgument, err)
				}
				if capB != "" {
					if pf.Cap, err = memplan.ParseBytes(capB); err != nil {
						return fmt.Errorf("%w: --cap: %v", api.ErrInvalidArgument, err)
					}
				}
				opt.Prefetch = pf
			} else if capB != "" || latency != 0 {
				return fmt.Errorf("%w: --cap and --latency are prefetch options: give --bandwidth too", api.ErrInvalidArgument)
			}
			copt := client.MemPlanOptions{Seed: seed, NoSearch: noSearch, Timeout: timeout,
				Cache: cache, Bandwidth: bw, Cap: capB, Latency: latency, Layout: layout}
			p, where, err := planFile(cmd, g, args[0], dims, opt, copt, offline, timeout)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), p)
			}
			return printMemPlan(cmd.OutOrStdout(), p, where, top)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&offline, "offline", false, "plan in this process, without asking quasimd")
	fs.BoolVar(&noSearch, "no-search", false, "keep the better greedy baseline, no search")
	fs.Uint64Var(&seed, "seed", 1, "the search's seed")
	fs.DurationVar(&timeout, "timeout", 5*time.Second, "time for the search, at most 30s (quasimd refuses more); the best plan by then is kept")
	fs.IntVar(&top, "top", 10, "largest tensors to list")
	fs.Var(dimFlag(dims.Dims), "dim", "value of an ONNX symbolic dimension, NAME=VALUE, or of dim K of graph input TENSOR, TENSOR[K]=VALUE (repeatable)")
	fs.Var(valueFlag(dims.Values), "value", valueUsage)
	fs.Int64Var(&dims.Unknown, "unknown", 0, "value of every ONNX graph input dimension still unknown, and of data-dependent output dims (0: such a dimension is an error)")
	fs.StringVar(&cache, "cache", "", "estimate cache misses for this hierarchy, SIZE/LINE/WAYS per level (e.g. 48K/64/12,2M/64/16)")
	fs.BoolVar(&layout, "layout", false, "with --cache: re-place tensors to lower the estimated misses, never raising the peak")
	fs.StringVar(&bw, "bandwidth", "", "schedule the host tensors' copies at this many bytes a second (e.g. 16G)")
	fs.StringVar(&capB, "cap", "", "with --bandwidth: device bytes the graph may hold (e.g. 512M; default no cap)")
	fs.DurationVar(&latency, "latency", 0, "with --bandwidth: fixed cost of each copy")
	return cmd
}

// planFile plans the graph or model at path through quasimd, or in this
// process when offline is set or no daemon answers (saying so on stderr),
// and says which.
func planFile(cmd *cobra.Command, g *globalOptions, path string, dims onnx.Options, opt memplan.Options, copt client.MemPlanOptions, offline bool, timeout time.Duration) (api.MemPlan, string, error) {
	var p api.MemPlan
	data, err := os.ReadFile(path)
	if err != nil {
		return p, "", badInput(err)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	format := memplan.FormatOf(path)
	gr, err := memplan.Read(data, format, name, dims)
	if err != nil {
		return p, "", fmt.Errorf("%w: %s: %v", api.ErrInvalidArgument, path, err)
	}
	p, where, err := planGraph(cmd, g, gr, opt, copt, offline, timeout)
	if err != nil || format != memplan.ONNX {
		return p, where, err
	}
	// An ONNX plan is checked against the model itself, lifetimes
	// derived from its nodes and subgraphs, whoever planned it.
	pl := make([]onnx.Placement, len(p.Placements))
	for i, x := range p.Placements {
		pl[i] = onnx.Placement{Tensor: x.Tensor, Offset: x.Offset, Bytes: x.Bytes}
	}
	if err := onnx.CheckPlan(data, pl); err != nil {
		return p, "", fmt.Errorf("%s: the plan %s fails the check against the model: %w", path, where, err)
	}
	return p, where, nil
}

// planGraph plans gr through quasimd, or in this process when offline
// is set or no daemon answers (saying so on stderr), and says which.
func planGraph(cmd *cobra.Command, g *globalOptions, gr *memgraph.Graph, opt memplan.Options, copt client.MemPlanOptions, offline bool, timeout time.Duration) (api.MemPlan, string, error) {
	var p api.MemPlan
	if !offline {
		body, err := json.Marshal(gr)
		if err != nil {
			return p, "", err
		}
		p, err = g.client(cmd).PlanMemory(cmd.Context(), body, copt)
		switch {
		case errors.Is(err, api.ErrUnavailable):
			fmt.Fprintf(cmd.ErrOrStderr(), "quasimctl: %v: planning offline\n", err)
		case err != nil:
			return p, "", err
		default:
			return p, "planned by quasimd", nil
		}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	start := time.Now()
	p, err := memplan.Plan(ctx, gr, opt)
	if err != nil {
		return p, "", err
	}
	p.PlanMS = float64(time.Since(start).Microseconds()) / 1000
	return p, "planned offline", nil
}

// printMemPlan writes the readable summary of p and its top largest
// tensors.
func printMemPlan(w io.Writer, p api.MemPlan, where string, top int) error {
	name := p.Name
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(w, "graph %s: %d ops, %d tensors, %s order, %s in %s ms\n", name, p.Ops, p.Tensors, p.Order, where, fmtSig(p.PlanMS, 3))
	ratio := func(v int64) string {
		if p.LowerBound == 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(v)/float64(p.LowerBound), 'f', 4, 64)
	}
	t := newTable(w, "", "BYTES", "/ BOUND")
	t.row("lower bound", fmtBytes(p.LowerBound), "1.0000")
	t.row("greedy by size", fmtBytes(p.BySize), ratio(p.BySize))
	t.row("greedy by breadth", fmtBytes(p.ByBreadth), ratio(p.ByBreadth))
	kept := "peak (" + p.Strategy
	if p.Stopped {
		kept += ", search stopped by the deadline"
	}
	t.row(kept+")", fmtBytes(p.Peak), ratio(p.Peak))
	if err := t.flush(); err != nil {
		return err
	}
	if p.DurationsFromStore > 0 {
		fmt.Fprintf(w, "\n%d op durations from quasimd's measured kernels\n", p.DurationsFromStore)
	}
	if len(p.Misses) > 0 {
		var m memgraph.MissEstimate
		if err := json.Unmarshal(p.Misses, &m); err != nil {
			return fmt.Errorf("misses: %w", err)
		}
		fmt.Fprintf(w, "\ncache misses: %d element accesses, %d line references, %d distinct lines\n", m.Accesses, m.Refs, m.Lines)
		t := newTable(w, "LEVEL", "SIZE", "LINE", "WAYS", "REFS", "MISSES", "MISS RATE", "FULLY ASSOC.")
		for _, l := range m.Levels {
			rate := "-"
			if l.Refs > 0 {
				rate = fmtSig(100*float64(l.Misses)/float64(l.Refs), 3) + "%"
			}
			t.row(l.Name, fmtBytes(l.Size), strconv.FormatInt(l.Line, 10), strconv.Itoa(l.Assoc), strconv.FormatInt(l.Refs, 10),
				strconv.FormatInt(l.Misses, 10), rate, strconv.FormatInt(l.FullyAssociative, 10))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if len(p.Layout) > 0 {
		var rep memgraph.LayoutReport
		if err := json.Unmarshal(p.Layout, &rep); err != nil {
			return fmt.Errorf("layout: %w", err)
		}
		fmt.Fprintf(w, "\nlayout for locality (%s, %d plans tried): %d tensors moved, peak %s -> %s, misses per level %v -> %v\n",
			rep.Strategy, rep.Tried, rep.Moved, fmtBytes(rep.PeakBefore), fmtBytes(rep.PeakAfter), rep.MissesBefore, rep.MissesAfter)
	}
	if len(p.Schedule) > 0 {
		var sc memgraph.Schedule
		if err := json.Unmarshal(p.Schedule, &sc); err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
		ms := func(ns int64) string { return fmtSig(float64(ns)/1e6, 4) + " ms" }
		fmt.Fprintf(w, "\nprefetch: %d copies (%s, %d re-copies after eviction), copy stream busy %s, peak %s\n",
			len(sc.Copies), fmtBytes(sc.CopyBytes), sc.Recopies, ms(sc.CopyTime), fmtBytes(sc.PeakBytes))
		t := newTable(w, "", "MAKESPAN", "/ COMPUTE ONLY")
		rel := func(v int64) string {
			if sc.ComputeOnly == 0 {
				return "-"
			}
			return strconv.FormatFloat(float64(v)/float64(sc.ComputeOnly), 'f', 3, 64)
		}
		t.row("compute only (lower bound)", ms(sc.ComputeOnly), rel(sc.ComputeOnly))
		t.row("copy, then compute", ms(sc.NoOverlap), rel(sc.NoOverlap))
		t.row("prefetch schedule", ms(sc.Makespan), rel(sc.Makespan))
		if err := t.flush(); err != nil {
			return err
		}
	}
	if top <= 0 || len(p.Placements) == 0 {
		return nil
	}
	ps := slices.Clone(p.Placements)
	slices.SortStableFunc(ps, func(a, b api.MemPlacement) int { return int(min(max(b.Bytes-a.Bytes, -1), 1)) })
	fmt.Fprintf(w, "\nlargest tensors:\n")
	t = newTable(w, "TENSOR", "BYTES", "OFFSET", "LIVE (OPS)")
	for _, pl := range ps[:min(top, len(ps))] {
		t.row(pl.Tensor, fmtBytes(pl.Bytes), strconv.FormatInt(pl.Offset, 10), fmt.Sprintf("%d-%d", pl.First, pl.Last))
	}
	return t.flush()
}

// fmtBytes is n bytes, with a binary unit above 1 KiB.
func fmtBytes(n int64) string {
	s := strconv.FormatInt(n, 10)
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	v := float64(n)
	u := ""
	for _, x := range units {
		if v < 1024 {
			break
		}
		v /= 1024
		u = x
	}
	if u == "" {
		return s
	}
	return s + " (" + fmtSig(v, 3) + " " + u + ")"
}

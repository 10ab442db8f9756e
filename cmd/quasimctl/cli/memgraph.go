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

func newMemgraphPlanCommand(g *globalOptions) *cobra.Command {
	var (
		offline  bool
		noSearch bool
		seed     uint64
		timeout  time.Duration
		top      int
		dims     = onnx.Options{Dims: dimFlag{}}
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
memgraph's own limits apply.`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
			gr, err := memplan.Read(data, memplan.FormatOf(path), name, dims)
			if err != nil {
				return fmt.Errorf("%w: %s: %v", api.ErrInvalidArgument, path, err)
			}
			opt := memplan.Options{Seed: seed, NoSearch: noSearch}
			var p api.MemPlan
			where := "planned offline"
			if !offline {
				body, err := json.Marshal(gr)
				if err != nil {
					return err
				}
				p, err = g.client(cmd).PlanMemory(cmd.Context(), body, client.MemPlanOptions{Seed: seed, NoSearch: noSearch, Timeout: timeout})
				switch {
				case errors.Is(err, api.ErrUnavailable):
					fmt.Fprintf(cmd.ErrOrStderr(), "quasimctl: %v: planning offline\n", err)
					offline = true
				case err != nil:
					return err
				default:
					where = "planned by quasimd"
				}
			}
			if offline {
				ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
				defer cancel()
				start := time.Now()
				if p, err = memplan.Plan(ctx, gr, opt); err != nil {
					return err
				}
				p.PlanMS = float64(time.Since(start).Microseconds()) / 1000
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
	fs.DurationVar(&timeout, "timeout", 5*time.Second, "time for the search (quasimd caps it at 30s); the best plan by then is kept")
	fs.IntVar(&top, "top", 10, "largest tensors to list")
	fs.Var(dimFlag(dims.Dims), "dim", "value of an ONNX symbolic dimension, NAME=VALUE (repeatable)")
	fs.Int64Var(&dims.Unknown, "unknown", 0, "value of every ONNX dimension still unknown (0: such a dimension is an error)")
	return cmd
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

package memplan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/memgraph"
	"github.com/quasim/quasim/memgraph/onnx"
	"github.com/quasim/quasim/memgraph/tflite"
)

// Formats a graph may come in.
const (
	JSON   = "json"
	ONNX   = "onnx"
	TFLite = "tflite"
)

// FormatOf is the format of a file, from its extension: .onnx, .tflite,
// anything else JSON.
func FormatOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".onnx":
		return ONNX
	case ".tflite":
		return TFLite
	}
	return JSON
}

// Read decodes and checks a graph. name names a model's graph (ONNX and
// TFLite files carry none); dims resolves ONNX dims left open. Every
// error is about the input and names the field, tensor or op.
func Read(data []byte, format, name string, dims onnx.Options) (*memgraph.Graph, error) {
	switch format {
	case JSON, "":
		return memgraph.Decode(data)
	case ONNX:
		return onnx.Read(data, name, dims)
	case TFLite:
		return tflite.Read(data, name)
	}
	return nil, fmt.Errorf("format %q: want json, onnx or tflite", format)
}

// Options choose the search.
type Options struct {
	Seed     uint64 // the search's seed
	NoSearch bool   // the better baseline only
}

// Plan plans g, searching until ctx is done (then it keeps the best plan
// found so far and sets Stopped). The answer has no PlanMS: the caller
// times it.
func Plan(ctx context.Context, g *memgraph.Graph, opt Options) (api.MemPlan, error) {
	stopped := false
	mo := memgraph.Options{Stop: func() bool {
		stopped = stopped || ctx.Err() != nil
		return stopped
	}}
	if !opt.NoSearch {
		mo.Rand = rand.New(rand.NewPCG(opt.Seed, 0))
	}
	r, err := memgraph.Plan(g, mo)
	if err != nil {
		return api.MemPlan{}, err
	}
	out := api.MemPlan{
		Name: g.Name, Ops: len(g.Ops), Tensors: len(g.Tensors), Order: "fixed",
		Peak: r.Peak, LowerBound: r.LowerBound, Ratio: 1, BySize: r.BySize, ByBreadth: r.ByBreadth,
		Strategy: r.Strategy, Stopped: stopped,
		Placements: make([]api.MemPlacement, len(g.Tensors)),
	}
	if r.LowerBound > 0 {
		out.Ratio = float64(r.Peak) / float64(r.LowerBound)
	}
	if g.Order == "free" {
		out.Order = "free"
		out.OpOrder = make([]string, len(r.Order))
		for k, op := range r.Order {
			out.OpOrder[k] = g.Ops[op].ID
		}
	}
	for i, t := range g.Tensors {
		iv := r.Intervals[i]
		out.Placements[i] = api.MemPlacement{Tensor: t.ID, Offset: r.Offsets[i], Bytes: t.Bytes, First: iv.First, Last: iv.Last}
	}
	return out, nil
}

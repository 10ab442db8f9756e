package memplan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
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

// Options choose the search and what else the answer carries.
type Options struct {
	Seed     uint64 // the search's seed
	NoSearch bool   // the better baseline only
	// Cache, when set, adds the plan's cache-miss estimate for it.
	Cache *memgraph.CacheSpec
	// Prefetch, when set, adds the schedule of the host tensors' copies.
	Prefetch *memgraph.PrefetchOptions
	// Layout, with Cache, re-places the tensors to lower the estimated
	// misses without raising the peak (memgraph.Layout), and says what
	// it changed; the placements, schedule and misses are of that plan.
	Layout bool
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
	var layout []byte
	if opt.Layout {
		if opt.Cache == nil {
			return api.MemPlan{}, fmt.Errorf("%w: a layout for locality needs a cache to estimate", memgraph.ErrBadCache)
		}
		r2, rep, err := memgraph.Layout(g, r, *opt.Cache, memgraph.LayoutOptions{Stop: mo.Stop})
		if err != nil {
			return api.MemPlan{}, err
		}
		if layout, err = json.Marshal(rep); err != nil {
			return api.MemPlan{}, err
		}
		r = r2
	}
	out := api.MemPlan{
		Name: g.Name, Ops: len(g.Ops), Tensors: len(g.Tensors), Order: "fixed",
		Peak: r.Peak, LowerBound: r.LowerBound, Ratio: 1, BySize: r.BySize, ByBreadth: r.ByBreadth,
		Strategy: r.Strategy, Stopped: stopped,
		Placements: make([]api.MemPlacement, len(g.Tensors)),
		Layout:     layout,
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
	if opt.Cache != nil {
		m, err := memgraph.Misses(g, r, *opt.Cache)
		if err != nil {
			return out, err
		}
		if out.Misses, err = json.Marshal(m); err != nil {
			return out, err
		}
	}
	if opt.Prefetch != nil {
		sc, err := memgraph.Prefetch(g, r, *opt.Prefetch)
		if err != nil {
			return out, err
		}
		if out.Schedule, err = json.Marshal(sc); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ParseCache reads a cache hierarchy, first level first:
// "SIZE/LINE/WAYS,...", for example "48K/64/12,2M/64/16" (K, M and G are
// powers of 1024; 0 ways is fully associative).
func ParseCache(v string) (*memgraph.CacheSpec, error) {
	cs := &memgraph.CacheSpec{}
	for i, lv := range strings.Split(v, ",") {
		f := strings.Split(strings.TrimSpace(lv), "/")
		if len(f) != 3 {
			return nil, fmt.Errorf("cache %q: level %d is %q, want SIZE/LINE/WAYS (e.g. 48K/64/12)", v, i+1, lv)
		}
		size, err1 := ParseBytes(f[0])
		line, err2 := ParseBytes(f[1])
		ways, err3 := strconv.Atoi(f[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("cache %q: level %d: %v", v, i+1, err)
		}
		cs.Levels = append(cs.Levels, memgraph.CacheLevel{Name: fmt.Sprintf("L%d", i+1), Size: size, Line: line, Assoc: ways})
	}
	return cs, nil
}

// ParseBytes reads a byte count or rate: an integer with an optional K, M,
// G or T suffix (powers of 1024).
func ParseBytes(v string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(v))
	mul := int64(1)
	for i, suf := range []string{"K", "M", "G", "T"} {
		if strings.HasSuffix(t, suf) {
			t, mul = strings.TrimSuffix(t, suf), int64(1)<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mul {
		return 0, fmt.Errorf("%q: want a non-negative byte count such as 65536, 48K or 2G", v)
	}
	return n * mul, nil
}

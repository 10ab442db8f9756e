package daemon

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/memplan"
	"github.com/quasim/quasim/memgraph"
	"github.com/quasim/quasim/memgraph/onnx"
)

// Bounds of POST /v1/memgraph/plan. Any local reader may plan, so they
// bound the memory (the body, the graph) and CPU (the search's time, the
// plans at once) one caller can take. At the limits a plan allocates
// about 200 MB (the JSON both ways adds about 130 MB) and its two
// baselines, which the deadline does not cut, take about a second
// (docs/kernel-authors/memgraph.md: BenchmarkMemgraphPlan).
const (
	MemPlanMaxBody     = 16 << 20 // bytes of graph or model
	MemPlanMaxTensors  = 100_000
	MemPlanMaxOps      = 100_000
	MemPlanTime        = 5 * time.Second  // the search's time when ?timeout= is absent
	MemPlanMaxTime     = 30 * time.Second // the most ?timeout= may ask
	MemPlanBodyTime    = 30 * time.Second // to send the body: a slow sender holds a slot no longer
	MemPlanConcurrency = 2                // plans at once; more get 429
	// MemPlanMaxRefs bounds a cache-miss estimate's trace (line
	// references; about a second of CPU, docs/kernel-authors/memgraph.md "Locality and cache
	// misses"): the estimate has no deadline of its own.
	MemPlanMaxRefs = 1 << 24
)

// memPlanner serves POST /v1/memgraph/plan.
type memPlanner struct {
	maxBody            int64
	maxTensors, maxOps int
	defTime, maxTime   time.Duration
	bodyTime           time.Duration
	slots              chan struct{} // one token per plan running
	// durations fills the ops' missing durations from the store (ops that
	// name a tuned kernel); nil in tests without a daemon.
	durations func(g *memgraph.Graph) int
}

func newMemPlanner() *memPlanner {
	return &memPlanner{
		maxBody: MemPlanMaxBody, maxTensors: MemPlanMaxTensors, maxOps: MemPlanMaxOps,
		defTime: MemPlanTime, maxTime: MemPlanMaxTime, bodyTime: MemPlanBodyTime,
		slots: make(chan struct{}, MemPlanConcurrency),
	}
}

// memgraphHandler is the route's handler; s.memgraph keeps its bounds
// and slots (tests set it before handler runs).
func (s *server) memgraphHandler() http.HandlerFunc {
	if s.memgraph == nil {
		s.memgraph = newMemPlanner()
	}
	p := s.memgraph
	if p.durations == nil && s.sched != nil && s.st != nil {
		p.durations = s.fillDurations
	}
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		v, status, err := p.serve(w, r)
		if err != nil {
			if status == 0 {
				status, _ = sockapi.StatusOf(err)
			}
			s.log.Debug().Err(err).Str("route", api.RouteMemgraphPlan).Int("status", status).Msg("request failed")
			if status == http.StatusRequestEntityTooLarge {
				sockapi.WriteJSON(w, status, api.Error{Error: err.Error(), Code: api.CodeInvalidArgument})
				return
			}
			sockapi.WriteError(w, err)
			return
		}
		s.log.Debug().Str("route", api.RouteMemgraphPlan).Dur("dur", time.Since(start)).Int("tensors", v.Tensors).Msg("request")
		sockapi.WriteJSON(w, http.StatusOK, v)
	}
}

// serve plans r's graph. A status of 413 comes with its error; other
// errors carry their status in their sentinel.
func (p *memPlanner) serve(w http.ResponseWriter, r *http.Request) (api.MemPlan, int, error) {
	var zero api.MemPlan
	tooBig := func() error {
		return sockapi.Invalidf("body over the limit of %d bytes (%d MiB) for a graph or model", p.maxBody, p.maxBody>>20)
	}
	// Refuse a body announced too big before reading a byte of it.
	if r.ContentLength > p.maxBody {
		return zero, http.StatusRequestEntityTooLarge, tooBig()
	}
	q := r.URL.Query()
	format, opt, dims, timeout, err := p.query(q)
	if err != nil {
		return zero, 0, err
	}
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	default:
		return zero, 0, sockapi.RetryLater(time.Second, "%d memory plans are running, the most at once; retry", cap(p.slots))
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(p.bodyTime)) // best effort: not every writer has one
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return zero, http.StatusRequestEntityTooLarge, tooBig()
		}
		return zero, 0, sockapi.Invalidf("read body (it must arrive within %s): %v", p.bodyTime, err)
	}
	rc.SetReadDeadline(time.Time{})
	name := q.Get("name")
	if name == "" && format != memplan.JSON {
		name = "model"
	}
	g, err := memplan.Read(data, format, name, dims)
	if err != nil {
		return zero, 0, sockapi.Invalidf("%v", err)
	}
	if len(g.Tensors) > p.maxTensors || len(g.Ops) > p.maxOps {
		return zero, 0, sockapi.Invalidf("graph has %d tensors and %d ops, over the daemon's limit of %d tensors and %d ops (plan it offline: quasimctl memgraph plan --offline)",
			len(g.Tensors), len(g.Ops), p.maxTensors, p.maxOps)
	}
	filled := 0
	if p.durations != nil {
		filled = p.durations(g)
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	t0 := time.Now()
	v, err := memplan.Plan(ctx, g, opt)
	if err != nil {
		for _, e := range []error{memgraph.ErrInvalid, memgraph.ErrBadCache, memgraph.ErrTraceTooLong, memgraph.ErrBadOptions, memgraph.ErrCapTooSmall} {
			if errors.Is(err, e) {
				return zero, 0, sockapi.Invalidf("%v", err)
			}
		}
		return zero, 0, err // memgraph.ErrBadPlan, ErrBadSchedule: a bug, 500
	}
	v.PlanMS = float64(time.Since(t0).Microseconds()) / 1000
	v.DurationsFromStore = filled
	return v, 0, nil
}

// fillDurations gives each op that names a quasim kernel (and a problem,
// unless the kernel has one job) but no duration the job's best measured
// time, and returns how many it filled. An op whose job has no ok trial
// keeps 0 (unknown).
func (s *server) fillDurations(g *memgraph.Graph) int {
	n := 0
	// A graph names one kernel at one problem in many ops: read each
	// job's trials once.
	best := map[[2]string]float64{}
	for i := range g.Ops {
		op := &g.Ops[i]
		if op.Kernel == "" || op.Duration != 0 {
			continue
		}
		key := [2]string{op.Kernel, op.Problem}
		ms, seen := best[key]
		if !seen {
			if k, ok := s.sched.kernel(op.Kernel); ok {
				tp, _ := s.tunedProblem(k, op.Problem)
				ms = tp.BestMS
			}
			best[key] = ms
		}
		if ms > 0 {
			op.Duration = int64(ms * 1e6)
			n++
		}
	}
	return n
}

// query reads the route's parameters.
func (p *memPlanner) query(q map[string][]string) (format string, opt memplan.Options, dims onnx.Options, timeout time.Duration, err error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	format = get("format")
	switch format {
	case "":
		format = memplan.JSON
	case memplan.JSON, memplan.ONNX, memplan.TFLite:
	default:
		return "", opt, dims, 0, sockapi.Invalidf("format %q: want json, onnx or tflite", format)
	}
	opt.Seed = 1
	if v := get("seed"); v != "" {
		if opt.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return "", opt, dims, 0, sockapi.Invalidf("seed %q: want an unsigned integer", v)
		}
	}
	switch v := get("search"); v {
	case "", "true":
	case "false":
		opt.NoSearch = true
	default:
		return "", opt, dims, 0, sockapi.Invalidf("search %q: want true or false", v)
	}
	timeout = p.defTime
	if v := get("timeout"); v != "" {
		d, perr := time.ParseDuration(v)
		if perr != nil || d <= 0 || d > p.maxTime {
			return "", opt, dims, 0, sockapi.Invalidf("timeout %q: want a duration in (0, %s]", v, p.maxTime)
		}
		timeout = d
	}
	for _, kv := range q["dim"] {
		name, n, perr := onnx.ParseDim(kv)
		if perr != nil {
			return "", opt, dims, 0, sockapi.Invalidf("%v", perr)
		}
		if dims.Dims == nil {
			dims.Dims = map[string]int64{}
		}
		dims.Dims[name] = n
	}
	for _, kv := range q["value"] {
		name, v, perr := onnx.ParseValue(kv)
		if perr != nil {
			return "", opt, dims, 0, sockapi.Invalidf("%v", perr)
		}
		if dims.Values == nil {
			dims.Values = map[string][]int64{}
		}
		dims.Values[name] = v
	}
	if v := get("cache"); v != "" {
		if opt.Cache, err = memplan.ParseCache(v); err != nil {
			return "", opt, dims, 0, sockapi.Invalidf("%v", err)
		}
		opt.Cache.MaxRefs = MemPlanMaxRefs
	}
	switch v := get("layout"); v {
	case "", "false":
	case "true":
		if opt.Cache == nil {
			return "", opt, dims, 0, sockapi.Invalidf("layout=true needs cache= (the layout lowers that cache's estimated misses)")
		}
		opt.Layout = true
	default:
		return "", opt, dims, 0, sockapi.Invalidf("layout %q: want true or false", v)
	}
	if v := get("bandwidth"); v != "" {
		pf := &memgraph.PrefetchOptions{}
		if pf.Bandwidth, err = memplan.ParseBytes(v); err != nil {
			return "", opt, dims, 0, sockapi.Invalidf("bandwidth (bytes a second): %v", err)
		}
		if c := get("cap"); c != "" {
			if pf.Cap, err = memplan.ParseBytes(c); err != nil {
				return "", opt, dims, 0, sockapi.Invalidf("cap: %v", err)
			}
		}
		if l := get("latency"); l != "" {
			d, perr := time.ParseDuration(l)
			if perr != nil || d < 0 {
				return "", opt, dims, 0, sockapi.Invalidf("latency %q: want a duration such as 10us", l)
			}
			pf.LatencyNS = d.Nanoseconds()
		}
		opt.Prefetch = pf
	} else if get("cap") != "" || get("latency") != "" {
		return "", opt, dims, 0, sockapi.Invalidf("cap and latency are prefetch options: give bandwidth too")
	}
	if v := get("unknown"); v != "" {
		if dims.Unknown, err = strconv.ParseInt(v, 10, 64); err != nil || dims.Unknown < 0 {
			return "", opt, dims, 0, sockapi.Invalidf("unknown %q: want a non-negative integer", v)
		}
	}
	return format, opt, dims, timeout, nil
}

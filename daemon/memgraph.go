package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/memplan"
	"github.com/quasim/quasim/memgraph"
	"github.com/quasim/quasim/memgraph/onnx"
)

// Bounds of POST /v1/memgraph/plan. Any local reader may plan, so they
// bound the memory (the body, the graph) and CPU (the search's time, the
// plans at once) one caller can take. At the limits a plan allocates
// about 200 MB (the JSON both ways adds about 130 MB) and its two
// baselines, which the deadline does not cut, take about a second
// (README, "Memory plans": BenchmarkMemgraphPlan).
const (
	MemPlanMaxBody     = 16 << 20 // bytes of graph or model
	MemPlanMaxTensors  = 100_000
	MemPlanMaxOps      = 100_000
	MemPlanTime        = 5 * time.Second  // the search's time when ?timeout= is absent
	MemPlanMaxTime     = 30 * time.Second // the most ?timeout= may ask
	MemPlanBodyTime    = 30 * time.Second // to send the body: a slow sender holds a slot no longer
	MemPlanConcurrency = 2                // plans at once; more get 429
)

// memPlanner serves POST /v1/memgraph/plan.
type memPlanner struct {
	maxBody            int64
	maxTensors, maxOps int
	defTime, maxTime   time.Duration
	bodyTime           time.Duration
	slots              chan struct{} // one token per plan running
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
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		v, status, err := p.serve(w, r)
		if err != nil {
			if status == 0 {
				status, _ = statusOf(err)
			}
			s.log.Debug().Err(err).Str("route", api.RouteMemgraphPlan).Int("status", status).Msg("request failed")
			if status == http.StatusRequestEntityTooLarge {
				writeJSON(w, status, api.Error{Error: err.Error(), Code: api.CodeInvalidArgument})
				return
			}
			writeError(w, err)
			return
		}
		s.log.Debug().Str("route", api.RouteMemgraphPlan).Dur("dur", time.Since(start)).Int("tensors", v.Tensors).Msg("request")
		writeJSON(w, http.StatusOK, v)
	}
}

// serve plans r's graph. A status of 413 comes with its error; other
// errors carry their status in their sentinel.
func (p *memPlanner) serve(w http.ResponseWriter, r *http.Request) (api.MemPlan, int, error) {
	var zero api.MemPlan
	tooBig := func() error {
		return invalidf("body over the limit of %d bytes (%d MiB) for a graph or model", p.maxBody, p.maxBody>>20)
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
		return zero, 0, &rateLimitError{retry: time.Second, msg: fmt.Sprintf("%d memory plans are running, the most at once; retry", cap(p.slots))}
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(p.bodyTime)) // best effort: not every writer has one
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return zero, http.StatusRequestEntityTooLarge, tooBig()
		}
		return zero, 0, invalidf("read body (it must arrive within %s): %v", p.bodyTime, err)
	}
	rc.SetReadDeadline(time.Time{})
	name := q.Get("name")
	if name == "" && format != memplan.JSON {
		name = "model"
	}
	g, err := memplan.Read(data, format, name, dims)
	if err != nil {
		return zero, 0, invalidf("%v", err)
	}
	if len(g.Tensors) > p.maxTensors || len(g.Ops) > p.maxOps {
		return zero, 0, invalidf("graph has %d tensors and %d ops, over the daemon's limit of %d tensors and %d ops (plan it offline: quasimctl memgraph plan --offline)",
			len(g.Tensors), len(g.Ops), p.maxTensors, p.maxOps)
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	t0 := time.Now()
	v, err := memplan.Plan(ctx, g, opt)
	if err != nil {
		if errors.Is(err, memgraph.ErrInvalid) {
			return zero, 0, invalidf("%v", err)
		}
		return zero, 0, err // memgraph.ErrBadPlan: a bug, 500
	}
	v.PlanMS = float64(time.Since(t0).Microseconds()) / 1000
	return v, 0, nil
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
		return "", opt, dims, 0, invalidf("format %q: want json, onnx or tflite", format)
	}
	opt.Seed = 1
	if v := get("seed"); v != "" {
		if opt.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return "", opt, dims, 0, invalidf("seed %q: want an unsigned integer", v)
		}
	}
	switch v := get("search"); v {
	case "", "true":
	case "false":
		opt.NoSearch = true
	default:
		return "", opt, dims, 0, invalidf("search %q: want true or false", v)
	}
	timeout = p.defTime
	if v := get("timeout"); v != "" {
		d, perr := time.ParseDuration(v)
		if perr != nil || d <= 0 || d > p.maxTime {
			return "", opt, dims, 0, invalidf("timeout %q: want a duration in (0, %s]", v, p.maxTime)
		}
		timeout = d
	}
	for _, kv := range q["dim"] {
		name, n, perr := onnx.ParseDim(kv)
		if perr != nil {
			return "", opt, dims, 0, invalidf("%v", perr)
		}
		if dims.Dims == nil {
			dims.Dims = map[string]int64{}
		}
		dims.Dims[name] = n
	}
	if v := get("unknown"); v != "" {
		if dims.Unknown, err = strconv.ParseInt(v, 10, 64); err != nil || dims.Unknown < 0 {
			return "", opt, dims, 0, invalidf("unknown %q: want a non-negative integer", v)
		}
	}
	return format, opt, dims, timeout, nil
}

package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/api"
)

// MemPlanOptions are the query of POST /v1/memgraph/plan (see api.MemPlan).
type MemPlanOptions struct {
	Format   string             // "json" (default), "onnx" or "tflite"
	Name     string             // a model's graph name
	Seed     uint64             // 0: the daemon's default (1)
	NoSearch bool               // the better baseline only
	Timeout  time.Duration      // 0: the daemon's default
	Dims     map[string]int64   // ONNX symbolic dims
	Unknown  int64              // ONNX dims still unknown
	Values   map[string][]int64 // values of integer ONNX graph inputs
	// Cache ("48K/64/12,2M/64/16") asks for the cache-miss estimate;
	// Bandwidth (bytes a second, "16G"), with Cap ("1G") and Latency, for
	// the prefetch schedule. Empty: not asked.
	Cache, Bandwidth, Cap string
	Latency               time.Duration
	Layout                bool // with Cache: re-place tensors for locality
}

// PlanMemory asks quasimd to plan the memory graph body (memgraph's JSON,
// or a model file with opt.Format), sent as is.
func (c *Client) PlanMemory(ctx context.Context, body []byte, opt MemPlanOptions) (api.MemPlan, error) {
	q := url.Values{}
	if opt.Format != "" {
		q.Set("format", opt.Format)
	}
	if opt.Name != "" {
		q.Set("name", opt.Name)
	}
	if opt.Seed != 0 {
		q.Set("seed", strconv.FormatUint(opt.Seed, 10))
	}
	if opt.NoSearch {
		q.Set("search", "false")
	}
	if opt.Timeout > 0 {
		q.Set("timeout", opt.Timeout.String())
	}
	for k, v := range opt.Dims {
		q.Add("dim", k+"="+strconv.FormatInt(v, 10))
	}
	for k, v := range opt.Values {
		vs := make([]string, len(v))
		for i, x := range v {
			vs[i] = strconv.FormatInt(x, 10)
		}
		q.Add("value", k+"="+strings.Join(vs, ","))
	}
	if opt.Unknown > 0 {
		q.Set("unknown", strconv.FormatInt(opt.Unknown, 10))
	}
	for k, v := range map[string]string{"cache": opt.Cache, "bandwidth": opt.Bandwidth, "cap": opt.Cap} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if opt.Layout {
		q.Set("layout", "true")
	}
	if opt.Latency > 0 {
		q.Set("latency", opt.Latency.String())
	}
	if body == nil {
		body = []byte{}
	}
	return call[api.MemPlan](ctx, c, http.MethodPost, "/v1/memgraph/plan", q, body)
}

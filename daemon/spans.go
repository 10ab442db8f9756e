package daemon

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/store"
)

// spanTokenSpans is how many spans of a POST /v1/spans cost one more token
// of the poster's rate bucket, beyond the request's own.
const spanTokenSpans = 1000

// postSpans stores a batch of one declared pipeline's spans. Any local uid
// may post (right observe, rate-limited per uid). The body is bounded
// (api.MaxBodyBytes: a longer declared Content-Length is refused before
// any of it is read) and validated whole; a bad span is named by index and
// field and nothing of the batch is stored. A batch larger than the
// pipeline keeps is refused; otherwise the oldest batches beyond the
// pipeline's retention are dropped to keep it.
func (s *server) postSpans(r *http.Request) (any, error) {
	if r.ContentLength > api.MaxBodyBytes {
		return nil, sockapi.TooLargef("body of %d bytes: spans take at most %d bytes a request", r.ContentLength, api.MaxBodyBytes)
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, sockapi.TooLargef("body larger than %d bytes: spans take at most that a request", mbe.Limit)
		}
		return nil, sockapi.Invalidf("read body: %v", err)
	}
	spans, err := causal.DecodeSpans(data)
	if err != nil {
		return nil, sockapi.Invalidf("spans: %v", err)
	}
	name := spans[0].Pipeline
	p, ok := s.sched.pipeline(name)
	if !ok {
		return nil, sockapi.NotFoundf("spans: pipeline %q is not declared (a pipeline file in the spec dir declares it)", name)
	}
	if len(spans) > p.Retention.Spans {
		return nil, sockapi.Invalidf("spans: %d spans in one batch, more than pipeline %q keeps (retention.spans %d in %s)", len(spans), name, p.Retention.Spans, p.Source)
	}
	if len(spans) >= spanTokenSpans {
		if err := s.api.Spend(r, float64(len(spans)/spanTokenSpans)); err != nil {
			return nil, err
		}
	}
	compact, err := json.Marshal(spans)
	if err != nil {
		return nil, err
	}
	batch := store.SpanBatch{At: time.Now().UTC(), Count: len(spans), Spans: compact}
	a, err := s.st.AddSpans(name, batch, store.SpanRetention{Spans: p.Retention.Spans, Batches: p.Retention.Batches})
	if err != nil {
		return nil, err
	}
	return api.SpansResponse{Pipeline: name, Stored: len(spans), Batch: a.Seq, DroppedBatches: a.DroppedBatches, DroppedSpans: a.DroppedSpans}, nil
}

package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/client"
)

// maxFixes bounds how many bad spans the sender removes from one batch
// before it gives the batch up (each removal validates the batch again).
const maxFixes = 32

// maxBackoff bounds the wait between tries while quasimd is away.
const maxBackoff = 30 * time.Second

// run is the background sender: it drains the ring into pending and sends
// what is ready, until Close.
func (r *SpanRecorder) run() {
	defer close(r.done)
	tick := time.NewTicker(max(r.opt.Interval/4, time.Millisecond))
	defer tick.Stop()
	s := sender{r: r}
	for {
		select {
		case <-r.wake:
		case <-tick.C:
		case <-r.stop:
			s.drain()
			s.final(r.stopCtx)
			return
		}
		s.drain()
		s.sendReady(time.Now())
	}
}

// sender is the background goroutine's state.
type sender struct {
	r       *SpanRecorder
	pending []spanRec // ended spans not yet sent, in the order they ended
	hold    time.Time // no request before this (quasimd away or rate-limiting)
	backoff time.Duration
	last    time.Time // when the last batch went
	// released is the first iteration not yet sent whole: iterations are
	// sent in order, each once all its spans have ended, so that quasimd
	// reads a runtime's batches as one run of increasing iterations.
	released int64
}

// drain moves the ring's spans to pending, at most a ring's worth so that
// producers faster than it cannot keep it here; while quasimd is away
// pending keeps at most Buffer spans, dropping the oldest.
func (s *sender) drain() {
	var rec spanRec
	for range s.r.opt.Buffer {
		if !s.r.ring.pop(&rec) {
			break
		}
		s.pending = append(s.pending, rec)
	}
	if over := len(s.pending) - s.r.opt.Buffer; over > 0 {
		s.r.count(func(r *SpanRecorder) { r.unsent += uint64(over) })
		s.pending = slices.Delete(s.pending, 0, over)
	}
}

// sendReady sends the spans of ended iterations (finished, and all their
// spans ended), in order, then those of the others once a batch of them is
// waiting or the oldest has waited Interval. Requests are at least
// Interval/4 apart unless a full batch is ready, so that a pipeline of
// fast iterations sends several in a batch and stays under quasimd's
// per-uid rate.
func (s *sender) sendReady(now time.Time) {
	r := s.r
	k, released := s.readyCount(now, r.now(), r.iter.Load())
	if k == 0 {
		return
	}
	s.last = now
	s.released = released
	ready := s.pending[:k]
	for len(ready) > 0 {
		n := batchLen(ready, r.opt.Batch)
		ctx, cancel := context.WithTimeout(context.Background(), r.opt.Timeout)
		err := s.post(ctx, ready[:n])
		cancel()
		if err != nil && retryable(err) {
			s.wait(err)
			break
		}
		s.backoff = 0
		ready = ready[n:]
	}
	s.pending = slices.Delete(s.pending, 0, k-len(ready))
}

// ended is the first iteration from s.released on, below cur (the
// running one), that still has spans open; cur when there is none. An
// iteration openSlots or more before cur counts as ended.
func (s *sender) ended(cur int64) int64 {
	i := max(s.released, cur-openSlots+1)
	for ; i < cur; i++ {
		if s.r.open[i%openSlots].Load() > 0 {
			return i
		}
	}
	return cur
}

// readyCount orders pending by iteration (each in end order) and says how
// many of it to send now (nowNS is now on the spans' clock; cur the
// running iteration), 0 to wait, and the first iteration not sent whole
// once they are.
func (s *sender) readyCount(now time.Time, nowNS, cur int64) (int, int64) {
	opt := s.r.opt
	if len(s.pending) == 0 || now.Before(s.hold) {
		return 0, s.released
	}
	slices.SortStableFunc(s.pending, func(a, b spanRec) int { return cmp.Compare(a.iter, b.iter) })
	rel := s.ended(cur)
	k := 0
	for k < len(s.pending) && s.pending[k].iter < rel {
		k++
	}
	oldest := int64(math.MaxInt64)
	for _, rec := range s.pending[k:] {
		oldest = min(oldest, rec.end)
	}
	rest := len(s.pending) - k
	switch {
	case rest > 0 && nowNS-oldest >= int64(opt.Interval):
		// Waited long enough: all goes, and what is still open of the
		// iterations before cur will follow on its own.
		k, rel = len(s.pending), cur
	case rest >= opt.Batch:
		k += rest / opt.Batch * opt.Batch
	}
	if k < opt.Batch && now.Sub(s.last) < opt.Interval/4 {
		return 0, s.released
	}
	return k, max(rel, s.released)
}

// batchLen is how many of ready go in the next batch: whole iterations
// while they fit in limit, else limit.
func batchLen(ready []spanRec, limit int) int {
	n := 0
	for n < len(ready) {
		end := n + 1
		for end < len(ready) && ready[end].iter == ready[n].iter {
			end++
		}
		switch {
		case end <= limit:
			n = end
		case n == 0:
			return limit
		default:
			return n
		}
	}
	return n
}

// final sends everything before the recorder stops, within ctx; what it
// cannot send is counted as unsent.
func (s *sender) final(ctx context.Context) {
	ready := s.pending
	// Finished iterations first, as sendReady orders them.
	slices.SortStableFunc(ready, func(a, b spanRec) int { return int(a.iter - b.iter) })
	for len(ready) > 0 && ctx.Err() == nil {
		n := batchLen(ready, s.r.opt.Batch)
		tctx, cancel := context.WithTimeout(ctx, s.r.opt.Timeout)
		err := s.post(tctx, ready[:n])
		cancel()
		if err != nil && retryable(err) {
			break
		}
		ready = ready[n:]
	}
	if len(ready) > 0 {
		s.r.count(func(r *SpanRecorder) { r.unsent += uint64(len(ready)) })
	}
	s.pending = nil
}

// wait holds the sender back after err: a rate limit for its Retry-After
// (else Interval), an absent daemon for a backoff that doubles up to
// maxBackoff.
func (s *sender) wait(err error) {
	var ce *client.Error
	if errors.As(err, &ce) && ce.RetryAfter > 0 {
		s.hold = time.Now().Add(ce.RetryAfter)
		return
	}
	s.backoff = min(max(2*s.backoff, s.r.opt.Interval), maxBackoff)
	s.hold = time.Now().Add(s.backoff)
}

// retryable tells the errors after which a batch is kept for a later try.
func retryable(err error) bool {
	return errors.Is(err, api.ErrUnavailable) || errors.Is(err, api.ErrRateLimited) || errors.Is(err, context.DeadlineExceeded)
}

// post sends recs as one batch, after removing the deps it cannot carry
// and the spans causal.Validate rejects. A batch over quasimd's size limit
// is sent again in halves. It counts what became of recs, except after a
// retryable error, which leaves recs to the caller to try again.
func (s *sender) post(ctx context.Context, recs []spanRec) error {
	r := s.r
	spans, cut := toSpans(recs, r.pipeline, r.opt.Device)
	spans, invalid, cut2, verr := clean(spans)
	settle := func(f func(*SpanRecorder)) {
		r.count(func(r *SpanRecorder) {
			r.depsDrop += uint64(cut + cut2)
			r.invalid += uint64(invalid)
			if verr != nil {
				r.lastErr = verr.Error()
			}
			f(r)
		})
	}
	if len(spans) == 0 {
		settle(func(*SpanRecorder) {})
		return nil
	}
	body, err := json.Marshal(spans)
	if err == nil {
		_, err = r.c.c.PostSpans(ctx, json.RawMessage(body))
	}
	var ce *client.Error
	switch {
	case err == nil:
		settle(func(r *SpanRecorder) { r.sent += uint64(len(spans)); r.batches++ })
	case errors.As(err, &ce) && ce.Status == http.StatusRequestEntityTooLarge && len(recs) > 1:
		// Halves, each once: a part sent cannot be taken back, so a part
		// that meets a retryable error is not kept for a later try.
		h := len(recs) / 2
		for _, part := range [][]spanRec{recs[:h], recs[h:]} {
			if err := s.post(ctx, part); err != nil {
				r.count(func(r *SpanRecorder) { r.unsent += uint64(len(part)) })
			}
		}
	case retryable(err):
		r.count(func(r *SpanRecorder) { r.lastErr = err.Error() })
		return err
	default:
		settle(func(r *SpanRecorder) { r.rejected += uint64(len(spans)); r.lastErr = err.Error() })
	}
	return nil
}

// toSpans makes the wire spans of one batch, keeping only the deps on
// spans in it; cut counts the others.
func toSpans(recs []spanRec, pipeline, device string) (spans []causal.Span, cut int) {
	in := make(map[uint64]bool, len(recs))
	for _, rec := range recs {
		in[rec.id] = true
	}
	spans = make([]causal.Span, len(recs))
	for i, rec := range recs {
		sp := causal.Span{ID: rec.id, Pipeline: pipeline, Iteration: int(rec.iter), Kernel: rec.kernel, Problem: rec.problem,
			Device: device, Stream: rec.stream, Start: rec.start, End: rec.end}
		for _, d := range rec.deps[:rec.ndeps] {
			if in[d] && d != rec.id {
				sp.Deps = append(sp.Deps, d)
			} else {
				cut++
			}
		}
		spans[i] = sp
	}
	return spans, cut
}

// clean removes the spans causal.Validate rejects, one at a time (the
// first it names each time), with the deps on them, so that the batch
// quasimd gets is valid; after maxFixes removals it gives the whole batch
// up. err is the last rejection, nil when there was none.
func clean(spans []causal.Span) (_ []causal.Span, invalid, cut int, err error) {
	for fixes := 0; len(spans) > 0; fixes++ {
		verr := causal.Validate(spans)
		if verr == nil {
			return spans, invalid, cut, err
		}
		err = verr
		var se *causal.SpanError
		if !errors.As(verr, &se) || se.Index < 0 || se.Index >= len(spans) || fixes >= maxFixes {
			return nil, invalid + len(spans), cut, err
		}
		bad := spans[se.Index].ID
		spans = slices.Delete(spans, se.Index, se.Index+1)
		invalid++
		for i := range spans {
			if k := slices.Index(spans[i].Deps, bad); k >= 0 {
				spans[i].Deps = slices.Delete(spans[i].Deps, k, k+1)
				cut++
			}
		}
	}
	return spans, invalid, cut, err
}

// count updates the sender's counters under the lock Stats takes.
func (r *SpanRecorder) count(f func(*SpanRecorder)) {
	r.mu.Lock()
	f(r)
	r.mu.Unlock()
}

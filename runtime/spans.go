package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quasim/quasim/causal"
)

// MaxSpanDeps is how many dependencies one span keeps; Start drops the
// rest, counting them in SpanStats.DepsDropped.
const MaxSpanDeps = 8

// openSlots is how many recent iterations the sender tells apart by their
// open spans; an iteration older than that counts as ended.
const openSlots = 64

// SpanOptions configures a SpanRecorder. Zero values take the defaults.
type SpanOptions struct {
	// Device is the device of every span (with the stream, it names the
	// track that runs one span at a time); empty for none.
	Device string
	// Buffer is how many ended spans wait for the background sender
	// (default 4096, rounded up to a power of two); an End that finds it
	// full drops its span (SpanStats.DroppedFull).
	Buffer int
	// Batch is the most spans one request carries, and the count that
	// wakes the sender early (default 1024).
	Batch int
	// Interval is how long a span may wait to be sent (default 1s); the
	// spans of a finished iteration go as soon as all of them have ended,
	// but requests are at least Interval/4 apart unless a full batch
	// waits, so fast iterations share batches.
	Interval time.Duration
	// Timeout bounds one request to the daemon (default 2s).
	Timeout time.Duration
}

// SpanStats counts what became of a recorder's spans. A span ended is, in
// the end, sent, dropped, rejected or invalid, or still waiting.
type SpanStats struct {
	Ended       uint64 // spans whose End was called
	Sent        uint64 // spans quasimd accepted
	Batches     uint64 // requests quasimd accepted
	DroppedFull uint64 // lost at End: the buffer was full, or the recorder closed
	Unsent      uint64 // lost: quasimd was away or rate-limiting for long, or Close's deadline passed
	Rejected    uint64 // quasimd refused their batch (unknown pipeline, a limit): nothing of it was stored
	Invalid     uint64 // removed before sending: causal.Validate rejected them (two spans overlapping on one stream, a cycle)
	DepsDropped uint64 // dependencies removed: to a span not in the same batch, or past MaxSpanDeps
	// LastError says why the last batch was not sent; empty if all were.
	LastError string
}

// SpanRecorder records the spans of one pipeline and sends them to quasimd
// in the background. Start and End never block, never allocate and never
// panic (a nil recorder's do nothing); a recorder is safe for concurrent
// use.
type SpanRecorder struct {
	c        *Client
	pipeline string
	opt      SpanOptions
	baseNS   int64     // the Unix time of base, in ns
	base     time.Time // with its monotonic reading: times are base + monotonic elapsed
	ring     ring
	nextID   atomic.Uint64
	iter     atomic.Int64
	closed   atomic.Bool
	// open counts the spans started and not yet ended of iteration i in
	// open[i%openSlots], so that the sender sends an iteration once all
	// of its spans have ended.
	open [openSlots]atomic.Int64

	wake    chan struct{} // buffered 1: End past Batch, NextIteration
	stop    chan struct{}
	stopCtx context.Context // Close's, read by the sender after stop closes
	done    chan struct{}
	once    sync.Once

	ended, full, depsCut atomic.Uint64
	mu                   sync.Mutex // guards the sender's counters below for Stats
	sent, batches        uint64
	unsent, rejected     uint64
	invalid, depsDrop    uint64
	lastErr              string
}

// Span is a started span: End records it. Its zero value's End does
// nothing.
type Span struct {
	r   *SpanRecorder
	rec spanRec
}

// spanRec is one span as the ring keeps it: no pointers but the strings
// the caller passed, so recording it allocates nothing.
type spanRec struct {
	id                      uint64
	iter                    int64
	start, end              int64
	kernel, problem, stream string
	ndeps                   uint8
	deps                    [MaxSpanDeps]uint64
}

// ID is the span's id, unique in its recorder, for the deps of later spans.
func (s Span) ID() uint64 { return s.rec.id }

// Spans returns a recorder of pipeline's spans, and starts its background
// sender; Close stops it. quasimd must declare the pipeline (a pipeline
// file in its spec dir), else it rejects the batches (counted in
// SpanStats.Rejected, LastError saying so).
func (c *Client) Spans(pipeline string, opt SpanOptions) (*SpanRecorder, error) {
	if pipeline == "" {
		return nil, errors.New("spans: empty pipeline name")
	}
	r := newSpanRecorder(c, pipeline, opt)
	go r.run()
	return r, nil
}

// newSpanRecorder makes a recorder without its sender.
func newSpanRecorder(c *Client, pipeline string, opt SpanOptions) *SpanRecorder {
	if opt.Buffer <= 0 {
		opt.Buffer = 4096
	}
	if opt.Batch <= 0 {
		opt.Batch = 1024
	}
	opt.Batch = min(opt.Batch, causal.MaxSpans)
	if opt.Interval <= 0 {
		opt.Interval = time.Second
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 2 * time.Second
	}
	n := 1
	for n < opt.Buffer {
		n <<= 1
	}
	opt.Buffer = n
	opt.Batch = min(opt.Batch, n)
	r := &SpanRecorder{c: c, pipeline: pipeline, opt: opt, base: time.Now(),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	r.baseNS = r.base.UnixNano()
	r.ring.init(n)
	return r
}

// now is the time in Unix ns, advancing with the monotonic clock.
func (r *SpanRecorder) now() int64 { return r.baseNS + int64(time.Since(r.base)) }

// Start starts a span of kernel at problem on stream, after the spans
// deps names (their IDs; at most MaxSpanDeps are kept). kernel, problem
// and stream are kept, not copied: pass strings that do not change.
func (r *SpanRecorder) Start(kernel, problem, stream string, deps ...uint64) Span {
	if r == nil {
		return Span{}
	}
	s := Span{r: r, rec: spanRec{id: r.nextID.Add(1), iter: r.iter.Load(), kernel: kernel, problem: problem, stream: stream}}
	if len(deps) > MaxSpanDeps {
		r.depsCut.Add(uint64(len(deps) - MaxSpanDeps))
		deps = deps[:MaxSpanDeps]
	}
	s.rec.ndeps = uint8(copy(s.rec.deps[:], deps))
	r.open[s.rec.iter%openSlots].Add(1)
	s.rec.start = r.now()
	return s
}

// End ends the span and queues it for sending; call it once. When the
// buffer is full, or the recorder is closed, the span is dropped and
// counted.
func (s Span) End() {
	r := s.r
	if r == nil {
		return
	}
	s.rec.end = r.now()
	r.ended.Add(1)
	r.open[s.rec.iter%openSlots].Add(-1)
	if r.closed.Load() {
		r.full.Add(1)
		return
	}
	n, ok := r.ring.push(&s.rec)
	if !ok {
		r.full.Add(1)
		return
	}
	if n >= uint64(r.opt.Batch) {
		r.poke()
	}
}

// NextIteration marks the end of one iteration of the pipeline: spans
// started from now on belong to the next one, whose number it returns.
// The finished iteration's spans are sent together once they have all
// ended (or once the oldest has waited SpanOptions.Interval).
func (r *SpanRecorder) NextIteration() int {
	if r == nil {
		return 0
	}
	n := r.iter.Add(1)
	r.poke()
	return int(n)
}

// poke wakes the sender without waiting.
func (r *SpanRecorder) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Stats returns what became of the spans so far.
func (r *SpanRecorder) Stats() SpanStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return SpanStats{
		Ended: r.ended.Load(), DroppedFull: r.full.Load(), DepsDropped: r.depsCut.Load() + r.depsDrop,
		Sent: r.sent, Batches: r.batches, Unsent: r.unsent, Rejected: r.rejected, Invalid: r.invalid, LastError: r.lastErr,
	}
}

// Close sends the spans that have ended and stops the sender, within ctx:
// when ctx ends first, Close returns its error and the spans still waiting
// are dropped (SpanStats.Unsent). Spans that end after Close are dropped.
func (r *SpanRecorder) Close(ctx context.Context) error {
	r.once.Do(func() {
		r.closed.Store(true)
		r.stopCtx = ctx
		close(r.stop)
	})
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close spans of %s: %w", r.pipeline, ctx.Err())
	}
}

// ring is a bounded lock-free multi-producer, single-consumer queue
// (Vyukov's): a producer claims a slot with one CAS and publishes it with
// its sequence number, and never waits; a full ring refuses.
type ring struct {
	mask  uint64
	slots []ringSlot
	tail  atomic.Uint64 // next position producers claim
	_     [56]byte      // keep tail and head on separate cache lines
	head  atomic.Uint64 // next position the consumer reads
}

type ringSlot struct {
	seq atomic.Uint64
	rec spanRec
}

func (q *ring) init(n int) {
	q.mask = uint64(n - 1)
	q.slots = make([]ringSlot, n)
	for i := range q.slots {
		q.slots[i].seq.Store(uint64(i))
	}
}

// push queues *rec and returns how many were queued with it (about), or
// false when the ring is full.
func (q *ring) push(rec *spanRec) (uint64, bool) {
	pos := q.tail.Load()
	for {
		sl := &q.slots[pos&q.mask]
		seq := sl.seq.Load()
		switch d := int64(seq - pos); {
		case d == 0:
			if q.tail.CompareAndSwap(pos, pos+1) {
				sl.rec = *rec
				sl.seq.Store(pos + 1)
				return pos + 1 - q.head.Load(), true
			}
			pos = q.tail.Load()
		case d < 0:
			return 0, false
		default:
			pos = q.tail.Load()
		}
	}
}

// pop takes the oldest published span; false when there is none (or the
// oldest claimed slot is not yet published: the next pop gets it).
func (q *ring) pop(out *spanRec) bool {
	pos := q.head.Load()
	sl := &q.slots[pos&q.mask]
	if sl.seq.Load() != pos+1 {
		return false
	}
	*out = sl.rec
	sl.rec = spanRec{} // drop the string references
	sl.seq.Store(pos + q.mask + 1)
	q.head.Store(pos + 1)
	return true
}

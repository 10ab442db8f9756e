// Package runtime is what a kernel runtime links to ask quasimd which
// config to launch with. Lookup answers from an in-process cache in tens of
// nanoseconds; a miss asks the daemon within the caller's deadline, and
// when the daemon is down or does not know the kernel it returns the
// caller's defaults with the reason, so a launch is never blocked. Watch
// long-polls the daemon and hot-swaps the cached config when a new one is
// promoted.
//
// With no Options.Socket the client finds the daemon as client.Sockets
// says: $QUASIM_SOCKET, else the user's own daemon when one answers, else
// the system service at /run/quasim/quasimd.sock. A lookup answered with
// the caller's defaults is counted (Client.Stats) and, once per outage,
// passed to Options.OnFallback, so an application can log that it runs
// untuned; the package itself never logs.
//
//	rt := runtime.New(runtime.Options{})
//	res := rt.Lookup(ctx, "sgemm", []int{1024, 1024, 1024}, defaults)
//	launch(res.Config)
//
// # Spans
//
// Client.Spans returns a SpanRecorder of one pipeline's kernel launches,
// for quasimd's causal profile (POST /v1/spans): which kernel is on the
// end-to-end critical path, and what tuning it would buy.
//
//	rec, _ := rt.Spans("infer", runtime.SpanOptions{Device: "gpu0"})
//	a := rec.Start("conv2d", "224,224", "stream0")
//	launch(); wait()
//	a.End()
//	b := rec.Start("reduce", "65536", "stream1", a.ID()) // after a
//	...
//	rec.NextIteration() // at the end of each pass of the pipeline
//	...
//	rec.Close(ctx) // sends what is left, within ctx
//
// Start and End cost two reads of the monotonic clock and a few atomic
// operations, and never allocate, block or panic: End puts the span in a
// fixed-size lock-free ring, and a background goroutine sends batches.
// Times go out as Unix ns, advancing with the monotonic clock; ids are
// unique in a recorder.
//
// Batches: the spans of a finished iteration go together once all of them
// have ended (a span started before NextIteration may end after it), and
// iterations go in order, so that quasimd reads a process's batches as one
// run of increasing iterations; several iterations share a batch while
// they fit in SpanOptions.Batch, and requests are at least Interval/4
// apart unless a full batch waits. The other spans go once Batch of them
// wait or the oldest has waited SpanOptions.Interval. quasimd validates a
// batch whole and takes dependencies only between spans of one batch, so a
// dependency on a span sent in another batch (across iterations, or across
// a cut inside a long one) is dropped and counted rather than kept: keeping
// spans back until their dependents end would make the buffer's bound
// depend on the pipeline. Before sending, the batch is checked with
// causal.Validate, the daemon's own validator: a span it rejects (two
// spans overlapping on one stream, a cycle) is removed and counted, so
// that one bad span does not cost the rest of its batch.
//
// Nothing is lost silently: SpanRecorder.Stats counts spans dropped because
// the buffer was full, unsent because quasimd was away or rate-limiting
// for long (a batch that meets either is kept and tried again after
// Retry-After or a backoff, while the buffer bounds what waits), rejected
// by quasimd (an unknown pipeline, a limit), or removed as invalid, and
// dependencies dropped.
//
// In a file that also needs the standard library's runtime, import that one
// as goruntime.
package runtime

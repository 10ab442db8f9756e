// Package runtime is what a kernel runtime links to ask quasimd which
// config to launch with. Lookup answers from an in-process cache in tens of
// nanoseconds; a miss asks the daemon within the caller's deadline, and
// when the daemon is down or does not know the kernel it returns the
// caller's defaults with the reason, so a launch is never blocked. Watch
// long-polls the daemon and hot-swaps the cached config when a new one is
// promoted.
//
//	rt := runtime.New(runtime.Options{})
//	res := rt.Lookup(ctx, "sgemm", []int{1024, 1024, 1024}, defaults)
//	launch(res.Config)
//
// In a file that also needs the standard library's runtime, import that one
// as goruntime.
package runtime

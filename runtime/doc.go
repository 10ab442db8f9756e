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
// In a file that also needs the standard library's runtime, import that one
// as goruntime.
package runtime

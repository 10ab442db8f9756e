// Package daemon wires quasimd together and runs its lifecycle: it opens the
// store, loads the kernel specs, schedules each job's tuning cycles with
// robfig/cron, keeps one lock per device so no two measurements overlap,
// retries failed cycles, answers lookups from its index of served configs,
// watches drift and error reports, and talks to the fleet.
//
// The socket API's HTTP layer (listener, fast lookup loop, peer-credential
// authorisation, rate limits, errors, paging) is package sockapi, which
// this package imports and never the other way: Run hands sockapi.New the
// route table of server, whose handlers read and change the lifecycle's
// state, and server's lookup index as the answer cache.
//
// This package has no compatibility promise outside quasim.
package daemon

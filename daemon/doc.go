// Package daemon wires quasimd together and runs its lifecycle: it opens the
// store, loads the kernel specs, schedules each job's tuning cycles with
// robfig/cron, keeps one lock per device so no two measurements overlap,
// and serves the socket API with peer-credential authorisation.
//
// This package has no compatibility promise outside quasim.
package daemon

// Package daemon wires quasimd together and runs its lifecycle.
//
// For now it tunes the builtin CPU kernels at their default problem sizes
// in cycles, with the evolution strategy, and logs each job's best config.
// The store, the cron schedules and the socket API build on this.
//
// This package has no compatibility promise outside quasim.
package daemon

// Package causalview turns spans into the profile that GET
// /v1/causal/{pipeline} answers and `quasimctl causal` shows: it splits
// batches of spans into iterations and summarises them with package causal
// into an api.Causal. quasimd uses it on the spans it stored, quasimctl on
// a trace file offline, so both give the same table. Pure: no I/O, and the
// bootstrap is seeded, so the same spans give the same answer.
//
// This package has no compatibility promise outside quasim.
package causalview

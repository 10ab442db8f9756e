// Package tuner runs one tuning cycle of a job: a strategy proposes configs,
// an evaluator measures them, and the best one is kept.
//
// This package has no compatibility promise outside quasim.
package tuner

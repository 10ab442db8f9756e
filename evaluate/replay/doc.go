// Package replay replays recorded real-GPU measurements as an evaluator:
// Kernel Tuner cache files (.json, .json.gz) and FAIR T4 results files. The
// domain of a recording is its set of config keys; failed configs keep their
// failure as the trial status, and each trial carries the simulated tuning
// cost (compile + benchmark + framework time) recorded for it, its phase
// times, its timestamp and its other observables (GFLOP/s, GB/s, ...).
//
// A recording's objective is time unless the file names another measured
// quantity (a cache's "objective", a T4 file's "objectives"). For time, a
// trial's Time is the recorded time in ms. For another objective, Time is
// the positive value every strategy minimises, made from the objective by
// the recording's fraction rule (RuleRatio, RuleInverse, RuleRange), so
// that Optimum()/Time is the fraction of the optimum the benchmark metric
// reports; the objective's own value stays in Observables (Value reads it)
// with the recorded time, if any, under "time".
//
// This package has no compatibility promise outside quasim.
package replay

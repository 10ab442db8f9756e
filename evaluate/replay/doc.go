// Package replay replays recorded real-GPU measurements as an evaluator:
// Kernel Tuner cache files (.json, .json.gz) and FAIR T4 results files. The
// domain of a recording is its set of config keys; failed configs keep their
// failure as the trial status, and each trial carries the simulated tuning
// cost (compile + benchmark + framework time) recorded for it.
//
// This package has no compatibility promise outside quasim.
package replay

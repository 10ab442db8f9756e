// Package evaluate defines how a config is measured: the Evaluator interface,
// the Trial it returns and the trial statuses. Its subpackages are the kinds
// of evaluator: builtin (real CPU kernels in Go) and replay (recorded
// measurements from Kernel Tuner cache files and FAIR T4 results).
//
// This package has no compatibility promise outside quasim.
package evaluate

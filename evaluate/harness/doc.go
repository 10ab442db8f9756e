// Package harness is the exec evaluator: it measures configs by talking to
// the operator's own benchmark harness, a long-lived child process that
// speaks JSON lines on stdin and stdout (docs/kernel-authors/harness-protocol.md). A
// harness that hangs, crashes or prints garbage costs one trial (timeout or
// runtime) and is restarted; quasimd carries on.
//
// Verification compares the checksum the harness reports for a config with
// the default config's, under the spec's tolerance, and runs the config
// again to check it is deterministic; a harness reports a checksum, not its
// outputs, so no error bound is checked. A hello param may declare a
// precision stage (Param.Precision, Harness.Precision); under an error
// budget each verify run asks the harness for its Accuracy, its measured
// error and a-priori bound, and the budget is checked on those
// (accuracy.go).
package harness

// Package causaltest makes synthetic Chrome traces of kernel pipelines for
// causal's tests, with the model's truth for each: the influence and slack
// of every kernel in an iteration, worked out from the stages' times
// alone. The traces are labelled synthetic in their otherData; none is a
// recording.
//
// This package has no compatibility promise outside quasim.
package causaltest

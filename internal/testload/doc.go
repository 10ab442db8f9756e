// Package testload measures how much slower than alone the machine runs
// a test now, so that tests whose deadlines stand for "something is
// wrong" (a hang, a worker that never answers) scale them by a measured
// factor instead of assuming an idle machine.
//
// This package has no compatibility promise outside quasim.
package testload

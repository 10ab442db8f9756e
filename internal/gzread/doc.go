// Package gzread reads a whole file that may be gzipped (its name ends in
// .gz), bounded, so a bad or huge file cannot exhaust memory.
//
// This package has no compatibility promise outside quasim.
package gzread

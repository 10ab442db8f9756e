// Package strategies is the registry of search strategies by name, shared by
// quasimd's cycles and quasimctl bench, so both run the same portfolio.
//
// This package has no compatibility promise outside quasim.
package strategies

// Package deptest checks a package's import graph in tests, so the
// dependency rules of STYLE.md hold by construction.
//
// This package has no compatibility promise outside quasim.
package deptest

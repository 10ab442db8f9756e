// Package version reports the build's version, set with
// -ldflags "-X github.com/quasim/quasim/internal/version.Version=v1.2.3".
//
// This package has no compatibility promise outside quasim.
package version

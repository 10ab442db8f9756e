// Package collect fetches what package report draws from a quasimd over
// its socket API: quasimctl report and the daemon's own /ui/ pages both
// read the daemon this way, so a page shows only what the API serves.
//
// This package has no compatibility promise outside quasim.
package collect

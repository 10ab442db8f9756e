// Package cli holds quasimctl's commands, one file per subcommand.
//
// This package has no compatibility promise outside quasim.
package cli

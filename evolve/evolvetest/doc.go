// Package evolvetest holds test helpers for search strategies: a small
// synthetic recorded space with constraints, a multi-modal objective and a
// ridge of failing configs, on which strategies are checked for
// determinism, resumption and beating random search.
//
// This package has no compatibility promise outside quasim.
package evolvetest

// Package evolve is quasim's search engine: the Strategy ask/tell interface
// and the History every strategy keeps, random search, the evolution
// strategy, the portfolio that hands each evaluation to the member strategy
// paying off (a discounted-UCB bandit over one shared history), rank
// transfer for warm starts (RankTransfer, Ranked), and the offline
// benchmark harness that replays recorded spaces and scores strategies with
// the metric of ARCHITECTURE.md.
//
// Strategies are deterministic: the same space, seed and told results give
// the same proposals, also across MarshalBinary and UnmarshalBinary. The
// package does no I/O; randomness and the clock come from the caller.
//
// This package has no compatibility promise outside quasim.
package evolve

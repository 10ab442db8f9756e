// Package evolve is quasim's search engine: the Strategy ask/tell interface
// and the History every strategy keeps, random search, the evolution
// strategy, forest search (a random-forest surrogate with expected
// improvement, as SMAC), the portfolio that hands each evaluation to the
// member strategy making new bests (a discounted-UCB bandit over one
// shared history; as options, a forest judge that picks among every
// member's proposals or screens the chosen member's), rank transfer for
// warm starts (RankTransfer, Ranked), and the offline benchmark harness
// that replays recorded spaces, scores strategies with the metric of
// ARCHITECTURE.md and chooses among their variants by leave-one-space-out
// (LeaveOneOut).
//
// Strategies are deterministic: the same space, seed and told results give
// the same proposals, also across MarshalBinary and UnmarshalBinary. The
// package does no I/O; randomness and the clock come from the caller.
//
// This package has no compatibility promise outside quasim.
package evolve

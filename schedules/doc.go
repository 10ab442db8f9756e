// Package schedules is quasim's differentiable scheduling strategy: it
// searches a kernel's launch schedule (tile sizes, block shapes, unroll
// factors …) by simultaneous perturbation stochastic approximation (SPSA)
// on a continuous relaxation of the discrete space. It has nothing to do
// with cron or with when tuning runs; the daemon owns that.
//
// # Relaxation
//
// Each parameter becomes θ_i in [0,1] over its value list, and a point θ
// rounds to the config with index round(θ_i·(len_i−1)). Categorical
// parameters are treated the same way, as ordinals over their listed order.
// A rounded point that violates the constraints is projected to the nearest
// valid config by genome.Space.Distance (ties to the first in All order).
//
// # SPSA
//
// Iteration k draws a Rademacher vector Δ and measures the loss at
// round(θ+c_k·Δ) and round(θ−c_k·Δ); the gradient estimate is
// ĝ = (L+ − L−)/(2c_k)·Δ⁻¹ and θ ← clip(θ − a_k·ĝ). The gains are Spall's:
// a_k = a/(S+k+1)^α and c_k = c/(k+1)^γ with defaults a=0.25, S=5,
// α=0.602, c=0.15, γ=0.101. Per parameter the perturbation is at least 0.51
// of one index step, so every perturbation moves every parameter with more
// than one value, and one update moves θ by at most 0.25 per parameter.
// When Ask is asked for several configs, one iteration measures several
// pairs around the same θ and averages their estimates.
//
// The loss is log(time); a failed config costs the largest log time seen so
// far plus one. Options.Lambda reserves a weight for an energy term, unused
// until energy is measured. Measured configs are free to re-read, so a
// perturbed point that lands on one uses its stored loss and is never
// proposed again; a run of such free iterations is bounded, after which
// perturbed points go to the nearest valid config not yet measured.
//
// # Start and restarts
//
// Options.Init uniform random configs come first (default 8); θ0 is the best
// of them. When the rounded θ has not moved for Options.Patience iterations
// in a row (default 4) the strategy restarts with fresh gains (k = 0) from
// the best config measured so far or, when θ already sits on it, from a
// random unmeasured config. Options.Restarts, when positive, caps the number
// of restarts.
//
// The strategy is deterministic: the same space, seed and told results give
// the same proposals, also across MarshalBinary and UnmarshalBinary. The
// package does no I/O.
//
// This package has no compatibility promise outside quasim.
package schedules

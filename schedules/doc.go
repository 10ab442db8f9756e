// Package schedules is quasim's differentiable scheduling: it searches a
// kernel's launch schedule (tile sizes, block shapes, unroll factors …) by
// gradient steps on a continuous relaxation of the discrete space. It has
// nothing to do with cron or with when tuning runs; the daemon owns that.
//
// Two strategies take their gradients from different places. Descent (the
// registered "schedules") differentiates a smooth surrogate of the loss;
// SPSA ("schedules-spsa") estimates the gradient from pairs of
// measurements. On the recorded GPU spaces SPSA does no better than random
// search, since rounding two perturbed points to a discrete grid makes its
// estimate mostly noise; Descent does clearly better and is the one the
// portfolio uses.
//
// # Descent
//
// The loss is the log of the job's objective value (time, energy, or the
// spec's weighted sum: the tuner folds energy in before a strategy sees a
// result, so no energy weight lives here), a failure costing the largest
// log value seen plus one. After Init random configs,
// each proposal:
//
//   - anchors at the best valid config of the current descent;
//   - fits Gaussian-kernel ridge regression to the Neighbours measured
//     configs nearest the anchor in relaxed coordinates (targets
//     standardised, ridge 0.01, length scale the median distance from the
//     anchor to them), and records its leave-one-out error;
//   - follows the surrogate's normalised negative gradient for Steps steps
//     from the anchor and from Starts−1 random points of the trust region
//     (a box of half-width r around the anchor), with steps
//     a_j = A·r·((S+1)/(S+j+1))^α, Spall's decay, clipped to the box, and
//     keeps the lowest point passed;
//   - rounds that point to the nearest valid config not yet measured
//     (Euclidean in relaxed coordinates, ties to the first in All order).
//
// The trust region widens by half when a proposal improves on the
// descent's best, halves after Patience proposals that do not, and below
// MinRadius the descent restarts from the next random config. Every
// proposal is kept as a Step (anchor, radius, θ, predicted and measured
// loss, fit error) for inspection.
//
// # Relaxation
//
// In both, each parameter becomes θ_i in [0,1] over its value list, and a point θ
// rounds to the config with index round(θ_i·(len_i−1)). Categorical
// parameters are treated the same way, as ordinals over their listed order.
// In SPSA a rounded point that violates the constraints is projected to the
// nearest valid config by genome.Space.Distance (ties to the first in All
// order).
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
// far plus one; as for Descent, the "time" is the job's objective value.
// Measured configs are free to re-read, so a
// perturbed point that lands on one uses its stored loss and is never
// proposed again; a run of such free iterations is bounded, after which
// perturbed points go to the nearest valid config not yet measured.
//
// # SPSA start and restarts
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

// Package quantumsearch is quasim's Ising/QUBO search strategy, the FMQA
// loop (factorization machine + quantum-style annealing): it fits a
// second-order factorization machine to the measured configs on a binary
// encoding of the genome, reads the machine as a QUBO, minimises that QUBO
// by simulated annealing over valid configs, and proposes the lowest-energy
// configs that were never measured. Annealer implements evolve.Strategy.
//
// # Encoding
//
// Every parameter becomes a few bits. Ordinal parameters (ints and floats
// with more than two values) use a thermometer ("domain wall") code: value
// index j of n sets bits 0..j-1 of n-1 bits. Neighbouring values then
// differ in one bit, so the linear weights of the machine learn a per-step
// effect and a smooth trend along the value list costs few weights, which
// matters with a few dozen trials; a one-hot code would treat 32 and 64 as
// unrelated as 32 and 4096. Categorical parameters (strings, bools) have no
// order, so they use a one-hot code (a single bit for two values). A
// parameter with one value uses no bits. Only codes of real values are ever
// evaluated: annealing moves in config space, so the invalid bit patterns of
// both codes never arise and need no penalty terms.
//
// # Model
//
// The surrogate is y ≈ w0 + Σ w_i x_i + Σ_{i<j} <v_i,v_j> x_i x_j with
// Options.Factors factors, fitted by shuffled SGD with L2 on the
// standardised normal scores of the measured times (their ranks, so a slow
// tail tens of times the optimum does not take the fit; Options.Targets
// "log" fits the log times instead); failed configs get the worst valid
// target + 1. The first fit starts from small seeded random
// factors and runs Options.Epochs epochs; later fits start from the previous
// weights and run Options.Refit epochs (at most 24,000 sample updates a fit), which keeps
// the overhead low. The
// weights are part of the marshalled state, so a resumed run proposes
// exactly what the uninterrupted one would have.
//
// # Annealing
//
// Each Ask after the initial design runs Options.Batch Metropolis chains of
// Options.Sweeps sweeps; a sweep proposes one move per mutable parameter.
// A move changes one parameter to an adjacent value (half the time) or to
// any other value; moves to invalid configs (genome.Space.Valid) are
// rejected. The temperature falls geometrically from T0 = 1 to T1 = 0.01
// (in units of the standard deviation of the training targets) over the
// chain. Half the chains start at the best measured configs, the others at
// random valid configs. Every visited, never asked or told config is a
// candidate; Ask returns the lowest-energy ones and tops up with uniformly
// random unseen configs when annealing finds too few, so the space is
// exhausted exactly. The energy of a config is computed from per-value
// partial sums of the factors, so one move costs O(Factors).
//
// By default the chains are independent simulated annealing. With
// Options.Tempering they are parallel tempering (replica exchange), as
// ARCHITECTURE.md names it: each chain stays at one temperature of a
// geometric ladder from T0 to T1, and after every sweep neighbours swap
// states by the Metropolis rule, for as many moves in all. It is not the
// default because it scored the same (docs/evidence/search-quality.md, "The portfolio against its
// members": 100 seeds, quantumsearch 0.829 / 0.885 / 0.928 / 0.966 / 0.985
// against 0.830 / 0.886 / 0.928 / 0.965 / 0.984 at k = 25..400), and the
// default keeps every earlier trace.
// TestCouplingsMatter checks that the QUBO's couplings, not the linear
// terms alone, are what the annealing gains from.
//
// On a space too large to list (genome.Space.Enumerable false), random
// starts and top-ups come from genome's uniform sampler and validity from
// Space.Valid, so nothing is listed.
//
// Up to 400 results the model is refitted on all of them at every Ask.
// Past that a full refit waits until the history has grown by a tenth,
// and each Ask between updates the model on the new results and 32
// earlier ones drawn at random, so the cost per evaluation stays flat
// (BenchmarkMarginalCost).
//
// The first Options.Init configs are drawn uniformly without replacement.
// History records one Step per annealing Ask. The package is pure: no I/O,
// and all randomness comes from the seed.
//
// This package has no compatibility promise outside quasim.
package quantumsearch

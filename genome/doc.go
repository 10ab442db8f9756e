// Package genome describes search spaces: parameters with ordered value
// lists, constraint expressions over them, and configs (genomes) that assign
// one value to each parameter.
//
// # Constraints
//
// Constraints use the Python-like subset of FAIR T1 Conditions and Kernel
// Tuner restrictions: arithmetic (+ - * / // % ** and unary minus, with
// Python's floor division, modulo and true division), chained comparisons,
// and/or/not, True/False, int and float literals, min/max/abs, and the names
// of parameters and problem-size variables. Each expression is compiled once
// (Compile) and evaluated without allocation.
//
// # Configs
//
// A config's canonical key is its values joined by commas in parameter
// order, as Kernel Tuner writes cache keys; its hash is the first 8 bytes of
// the key's SHA-256 in hex. Search moves (Neighbours, Mutate, Crossover)
// work on value indices and keep configs valid by repair.
//
// # Large spaces
//
// All lists every valid config; a space may hold billions. Count counts
// them without listing: a table of valid completions per parameter prefix,
// memoised on the values that constraints still to be checked read, over
// a parameter order where constraints bind early. Sample draws exactly
// uniformly from that table, and Nearest (behind Repair, Mutate and
// Crossover) is a bounded branch and bound over it. Enumerable says which
// way a space is served: listed up to EnumLimit valid configs (or with a
// recorded domain), counted past that. A space whose table would be too
// large is sampled by rejection instead; see Count and Sample.
//
// # FAIR T1
//
// ParseT1 reads FAIR T1 input files; their Values strings may be list
// literals, range() calls or simple list comprehensions.
//
// The package does no I/O and never logs; randomness comes from the caller.
package genome

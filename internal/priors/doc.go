// Package priors holds prior packs: what recorded tuning runs measured (the
// public benchmark hub's Kernel Tuner caches, FAIR T4 files, quasim's own
// exports), reduced to a compact, versioned file that quasimd warm-starts
// new jobs from.
//
// A pack lists sources, one per recording: the kernel's name, the device it
// ran on, the SHA-256 of the kernel's source when known, its parameters
// (each value in its Python str form, the form cache keys use) and every
// config it measured, ranked by rank quantile (0 for the fastest valid
// config, 1 for the slowest, ties sharing their mean rank) with the failed
// configs apart. Raw times are not kept: devices differ in speed, and
// evolve.RankTransfer compares only ranks across sources.
//
// A source matches a job when it measured the same kernel: by the SHA-256
// of the kernel's source when both sides have one (a source kernel edited
// since the recording matches nothing), else by the kernel's name. Its
// configs are translated into the job's space by parameter name and value
// (genome.Space.Translate); a source that holds none of the job's valid
// configs is left out.
//
// The file is gzipped JSON ({"format": "quasim-priors", "version": 1, ...});
// Decode refuses anything else with the field at fault. The package does no
// I/O: callers read and write the bytes.
package priors

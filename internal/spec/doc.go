// Package spec reads kernel specs: the files, one per kernel, that tell
// quasimd what to tune. quasimd loads them from a directory (default
// /etc/quasim/kernels.d, see LoadDir); with no directory or an empty one it
// tunes the builtin kernels (Builtins).
//
// # Format
//
// A spec is YAML (.yaml, .yml) or JSON (.json) with these keys; JSON uses the
// same keys and values:
//
//	name: sgemm                  # required; [A-Za-z0-9_.-]+
//	evaluator: builtin:sgemm     # required: builtin:<kernel> | replay:<Kernel Tuner cache or T4 file> |
//	                             # exec:<command and arguments> (docs/kernel-authors/harness-protocol.md) |
//	                             # wasm:<module.wasm> (docs/kernel-authors/wasm-abi.md); a relative replay or wasm path,
//	                             # or exec command with a slash, is relative to the spec's folder
//	objective: time              # time (the default), energy (mJ per run), edp (energy × time)
//	                             # or a weighted sum such as "0.7*time + 0.3*energy" (ms and mJ);
//	                             # energy needs a device that reads it (quasimctl devices)
//	problems:                    # optional problem sizes: a list of "1024,1024,1024" strings or
//	  - 256,256,256              # [1024, 1024, 1024] lists, or a map name -> vector (the names
//	  - [512, 512, 512]          # only label errors); default: a builtin kernel's own, a recording's
//	problem_dims: [m, n, k]      # optional names of the dims, usable in constraints; a builtin
//	                             # kernel names its own (sgemm: m, n, k)
//	parameters:                  # optional narrowing: each name is an evaluator parameter and each
//	  tile_m: [32, 64]           # value one of its values
//	constraints:                 # optional extra constraints over parameters and problem dims, in
//	  - tile_m * tile_n <= 4096  # the Python-like expression syntax of genome
//	schedule: "@every 6h"        # cron: 5 fields or a descriptor (@hourly, @every 90m); default "@every 6h"
//	budget: {evals: 60, seconds: 120}  # per cycle; default evals 60, seconds 0 (no limit);
//	                             # evals 0 means no evaluation limit and needs seconds > 0
//	default: {tile_m: 32}        # optional partial config served when nothing is tuned
//	verify: {tolerance: rel, value: 1e-5, repeats: 3, nondeterministic: reject,
//	         inputs: signed, error_budget: {rel: 1e-5}}
//	                             # tolerance abs|rel|ulp, value >= 0, repeats >= 0,
//	                             # nondeterministic reject|certify; used by certification;
//	                             # inputs signed|positive: the seeded verification inputs'
//	                             # sign (positive: a job whose data are, e.g. norms);
//	                             # error_budget: one of abs|rel|ulp > 0 (see Precision)
//	precision:                   # optional: which parameters are precision parameters and the
//	  acc: accumulation          # stage each sets: input, intermediate, accumulation or output
//	tune_on_miss: false          # a lookup of an untuned problem adds a job for it (default false)
//	on_miss:                     # bounds on those jobs, so a lookup cannot start costly work:
//	  max_problem: 1024,1024,1024  # largest size per dim (default: each dim's largest in problems)
//	  max_volume: 1.1e9          # largest product of the dims (default: the largest in problems)
//	timeout: 60s                 # longest one exec harness run may take (default 60s)
//
// An unknown key at the top level or inside budget or verify is an error, as
// is a key given twice; null is the same as leaving a key out. A FAIR T1 file
// (.json holding "ConfigurationSpace", or named *.T1.json) is accepted too: it
// is a spec named after its General.BenchmarkName (else the file name), with
// its own space and problem size, no evaluator and the default schedule and
// budget. It is listed and its default config served, but never tuned.
//
// # Pipelines
//
// A file whose top level holds the key "pipeline" declares a pipeline of
// kernels instead of a kernel spec; Load returns both kinds, LoadDir only
// the kernel specs (it skips pipeline files). Runtimes post a declared
// pipeline's spans to quasimd, which profiles it (package causal):
//
//	pipeline: infer              # required; [A-Za-z0-9_.-]+; its own namespace, apart from kernel names
//	kernels: [conv2d, reduce]    # optional: the kernel specs whose launches its spans record
//	budget_by_influence: true    # optional (default true): order and split tuning budget by
//	                             # each kernel's influence on the pipeline's end-to-end time
//	retention: {spans: 100000, batches: 10000}
//	                             # optional: the daemon keeps the newest span batches, at most
//	                             # this many spans (1 to 1,000,000) and batches (1 to 100,000)
//	zoning:                      # optional: tune the precision map of a chain jointly
//	  chain: [conv2d, reduce]    #   two of kernels, in data-flow order: the first's output is the
//	                             #   reduce's input (a builtin conv2d or sgemm feeding a builtin reduce)
//	  error_budget: {rel: 1e-3}  #   one budget for the chain's output (rel or abs)
//	  inputs: positive           #   optional: signed (default) or positive seeded inputs
//
// The same rules hold as for kernel specs: unknown keys are errors, null is
// a left-out key, errors are *FieldError naming file, field and line.
//
// # Precision
//
// A precision parameter's values name formats (fp32, fp16, bf16, int8,
// fp8_e4m3, int4; an accumulation stage also fp64 and kahan), listed most
// accurate first so a search moves along accuracy (precision.Stage.Rank).
// A builtin kernel declares its own (reduce: input and acc), as does an
// exec harness in its hello (docs/kernel-authors/harness-protocol.md); the
// precision section declares those of another evaluator, whose values
// must then be format names in that order, or restates a builtin's. In
// parameters and default, a precision value matches by format, so fp32
// names reduce's float32 accumulator; a name of no format is an error
// naming the field and what the stage accepts.
//
// Without an error budget a job keeps each precision parameter it does not
// narrow at fp32 or better (fp32 input; an fp64, kahan or fp32
// accumulator). With verify.error_budget the lower formats are searched
// too, and a config is certified only when its a-priori error bound, each
// stage's composed (precision.Sum), and its measured error against the
// float64 reference are both within the budget on every verification
// case (evaluate.VerifySettings.Budget); the certificate's error_budget
// check records the map, each stage's bound and the measured error. rel
// is relative to max(|reference|, the case's mean |reference|), abs is in
// units of the case's output scale, ulp in float32 ULPs.
//
// # Errors
//
// Every error about a file's content is a *FieldError, matching ErrInvalid,
// whose message names the file and the field and, for YAML and JSON values,
// the line:
//
//	/etc/quasim/kernels.d/a.yaml: schedule "every day": expected exactly 5 fields, found 2: [every day] (line 7)
//	/etc/quasim/kernels.d/b.yaml: constraints[1]: expression "x +": column 4: ... (line 12)
//
// Parse checks the file alone: it parses the schedule, compiles the
// constraints, and, for a builtin evaluator, checks parameter names, values
// and dims against the kernel. Jobs does the rest: it loads recordings,
// builds each problem's space and checks the default config in it.
//
// # Jobs
//
// Spec.Jobs gives one Job per problem: the evaluator, the problem, the space
// narrowed by parameters (a constraint `name in [v1, v2]` per narrowed
// parameter) and constraints, and the resolved default config.
//
// # Hash
//
// Spec.Hash versions everything derived from a spec (trials, policies,
// certificates): it is the first 8 bytes, in hex, of the SHA-256 of the
// canonical JSON of the normalised spec (Spec.Canonical): every object's keys
// sorted, no insignificant space, defaults filled in. It covers name,
// evaluator (with a replay path made absolute), objective, problems (dims,
// in file order; a map's in name order), problem_dims, parameters (values
// sorted), constraints (in order, as written), schedule (as written),
// budget, default, verify (with its error_budget), tune_on_miss, on_miss and precision when
// given and, for a T1 file, its parameters
// (names, kinds, values, defaults), conditions and problem size. It does not
// cover the file's path, its bytes, comments, formatting or key order, nor
// the content of a replay file. A builtin kernel's spec without problems
// gets the kernel's default problems and so the hash of a spec that lists
// them.
//
// This package has no compatibility promise outside quasim.
package spec

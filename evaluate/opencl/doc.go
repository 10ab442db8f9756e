// Package opencl tunes OpenCL kernels from their source, the way their
// authors hand them to Kernel Tuner: tunable parameters as #define lines
// before the source (Kernel.Prefix), the work-group size read from parameters
// (block_size_x, block_size_y, block_size_z by default) and the number of
// work-groups from the problem and grid divisors.
//
// # Launch geometry
//
// Per dim d of ProblemSize (1 to 3 dims): the work-group size is the
// value of the d-th block size parameter (256 in x and 1 in y and z when
// it is not a parameter, as Kernel Tuner); the number of work-groups is
// ceil(problem_size[d] / product(grid_div_d)), each grid divisor an
// expression of the parameters and the problem's dims; the global size
// is work-groups times the work-group size. grid_div_d defaults to the
// block size parameter of d, so that one work-item covers one element.
// For example, a 4096×4096 matmul whose work-items compute tile_size_x by
// tile_size_y outputs has problem_size [n, n], grid_div_x [block_size_x,
// tile_size_x] and grid_div_y [block_size_y, tile_size_y]: at block
// 16×4 and tiles 4×2 that is 64×512 work-groups of 16×4, a global size of
// 1024×2048.
//
// # Checks
//
// Buffers start from a .npy file's data (Arg.Data) or a fill. Every
// config's output buffers, after one run from the buffers' initial
// content, are compared element by element with a reference: answer files
// (Arg.Answer, Kernel Tuner's answer), the output of the reference config
// (Check.Reference over the default config), or of a reference kernel. A
// kernel that marks no output is run unchecked. An element passes within Check.Abs, or within
// Check.Rel times the larger of its reference's magnitude and its
// buffer's mean magnitude; both zero is exact. A config that fails is a
// wrong_result trial, so it is never certified or served.
//
// # Isolation
//
// The daemon never loads OpenCL itself. Evaluator runs a worker process
// (quasimd opencl-worker, WorkerMain) that speaks the exec harness
// protocol (docs/kernel-authors/harness-protocol.md): a driver crash, a kernel that
// never returns or an out-of-resources failure costs that trial
// (runtime, timeout or invalid) and a restart of the worker. Compiler
// failures are compile trials with the build log; a work-group the device
// or the kernel cannot take is invalid, as Kernel Tuner classes it.
//
// # Measurement
//
// Times are the kernel's own, from OpenCL profiling events, under the
// repetition rule of every quasim measurement (evaluate.Reps, the first
// run of a measurement a warm-up). Each trial records where its wall time
// went (compilation, benchmark, validation, framework: the FAIR T4
// names). Built programs are kept in the worker and, with a cache
// directory, on disk keyed by source, options, platform, device and
// driver version.
//
// Told the configs that come next (Prefetch), the worker builds them
// ahead: on pocl in helper processes (helpers.go), which fill pocl's
// kernel cache and are stopped while the worker launches; elsewhere on a
// thread of its own (ahead.go).
//
// This package has no compatibility promise outside quasim.
package opencl

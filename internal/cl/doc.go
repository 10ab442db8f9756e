// Package cl binds the OpenCL API at run time: it loads the system's ICD
// loader (libOpenCL.so.1) with purego, so quasim builds without cgo or
// OpenCL headers and runs where no OpenCL is installed, saying so.
//
// It covers what a tuner needs: platforms and devices and their
// properties, a context and a profiling command queue on one device,
// programs built from source (with their build log) or from a cached
// binary, kernels and their arguments, buffers, launches timed by
// profiling events, and the error names of the specification.
//
// Only quasimd's OpenCL worker process loads it (evaluate/opencl): a
// driver that crashes or hangs takes the worker with it, never the
// daemon.
//
// This package has no compatibility promise outside quasim.
package cl

// Package builtin is the evaluator of quasim's built-in CPU kernels: real
// kernels written in Go whose tunable parameters change how they run (loop
// blocking, manual unrolling, packing, worker goroutines, accumulator
// precision), each with a float64 reference implementation for verification.
// They let quasimd tune something useful on any machine with no
// configuration at all.
//
// New returns a Kernel, which implements evaluate.Evaluator. Besides the
// interface it offers Run (one execution of a config on given inputs),
// Reference (the float64 result), NewInputs (seeded random inputs) and
// DefaultProblems. Every parameter's default value is the naive choice
// (smallest tiles, no unrolling, no packing or local buffer, one worker,
// float32 accumulation, the ijk loop order), and the constraints always admit
// the default config, even for problems smaller than every tile.
//
// # Kernels
//
// sgemm: C = A·B in fp32, A m×k, B k×n, C m×n, row-major; problem dims m,n,k.
// Inputs.A is A and Inputs.B is B. Each worker owns every workers-th block of
// tile_m rows of C and walks tile_n-wide column blocks, then tile_k-deep k
// blocks, then its row blocks. With pack_b the tile_k×tile_n block of B is
// copied into a contiguous per-worker buffer laid out the way the inner loop
// reads it (row-major for ikj, transposed for ijk and jik). loop_order is the
// order inside a tile: ijk and jik take dot products of A rows and B columns
// (strided unless packed), ikj streams B rows into C rows. unroll unrolls the
// k loop: that many independent partial sums (ijk, jik) or that many B rows
// folded into one pass over the C row (ikj).
//
//	param       values              default
//	tile_m      16 32 64 128        16
//	tile_n      16 32 64 128        16
//	tile_k      16 32 64 128        16
//	unroll      1 2 4 8             1
//	workers     1 2 4 8             1
//	pack_b      False True          False
//	loop_order  ijk ikj jik         ijk
//
//	tile_m <= m or tile_m == 16      (and likewise tile_n/n, tile_k/k)
//	workers == 1 or tile_m * workers <= m
//	tile_m * tile_k + tile_k * tile_n + tile_m * tile_n <= 8192
//
// conv2d: "valid" 2D convolution (cross-correlation, the filter is not
// flipped) of an h×w fp32 image with an f×f filter, giving the (h-f+1)×(w-f+1)
// outputs where the filter fits; problem dims h,w,f. Inputs.A is the image
// and Inputs.B the filter, both row-major. The output is cut into
// tile_y×tile_x tiles dealt round-robin to the workers; with local_buffer
// each tile's input (tile plus f-1 halo) is first copied into a contiguous
// per-worker buffer. unroll computes that many adjacent outputs of a row
// together, loading each filter value once for all of them.
//
//	param         values                   default
//	tile_x        8 16 32 64 128 256       8
//	tile_y        1 2 4 8 16 32 64         1
//	workers       1 2 4 8                  1
//	local_buffer  False True               False
//	unroll        1 2 4 8                  1
//
//	tile_x <= w - f + 1 or tile_x == 8
//	tile_y <= h - f + 1
//	workers == 1 or tile_x * tile_y * workers <= (w - f + 1) * (h - f + 1)
//	unroll <= tile_x
//
// reduce: the sum of an fp32 n-vector, one output value; problem dim n.
// Inputs.A is the vector; B is unused. Workers take blocks of block values
// from an atomic counter and store each block's partial sum; the partials are
// added in block order, so the result is bitwise reproducible whatever the
// scheduling. unroll is the number of independent partial sums in a block.
// acc trades speed for precision: float32 (error growing with n), float64
// (float64 partials, one rounding at the end) or kahan (compensated float32
// sums, four dependent operations per value).
//
//	param    values                                   default
//	block    256 1024 4096 16384 65536 262144         256
//	unroll   1 2 4 8                                  1
//	workers  1 2 4 8                                  1
//	acc      float32 float64 kahan                    float32
//
//	block <= n or block == 256
//	workers == 1 or block * workers <= n
//
// Valid configs per default problem:
//
//	sgemm   128x128x128: 2496   256x256x256: 3024   384x256x320: 3024
//	conv2d  256x256x5:   1112   512x512x7:   1344   1024x1024x3: 1344
//	reduce  2097152:      288   4194304:      288   8388608:      288
//
// # Measurement
//
// Evaluate builds the inputs of a problem once (uniform in [-1, 1) from a
// PCG seeded with Options.Seed) and keeps them. It runs Options.Warmup
// untimed runs, then timed runs until the median time moved less than
// Options.RelStable over the last two runs, Options.MaxTime of timed running
// has passed or Options.MaxReps runs were made, never fewer than
// Options.MinReps. Trial.Times holds every timed run in ms, Trial.Time their
// median, Trial.Cost the wall seconds of the whole measurement including
// warmup. A kernel that panics gives a trial with StatusRuntime.
// Cancellation is checked between runs.
//
// # Spread
//
// How much the parameters matter, measured by BenchmarkSpread on the 2-core
// development VM (Intel Xeon, KVM) at one default problem per kernel, over
// every valid config or a seeded sample of 300 plus the default (median of
// up to 10 runs each):
//
//	go test ./evaluate/builtin -run '^$' -bench Spread -benchtime 1x
//
//	kernel  problem      configs   best ms  worst ms  default ms  default/best  worst/best
//	conv2d  512x512x7    301/1344    4.606     15.53       9.035          1.96        3.37
//	reduce  4194304      288/288     0.829     11.86       3.096          3.73       14.30
//	sgemm   256x256x256  301/3024    4.185     21.26      11.15           2.67        5.08
//
// The fastest configs were conv2d 256,16,1,False,8 (wide tiles, 8 outputs
// at a time), reduce 65536,8,1,float32 (big blocks, 8 partial sums) and sgemm
// 16,128,16,8,1,True,ikj (packed B, 8 rows of B per pass); the slowest
// conv2d 16,32,1,True,1, reduce 256,1,4,kahan and sgemm 16,16,128,8,1,False,jik
// (unpacked strided columns). A run just before gave best and default times
// within 5% of these and worst times within 13%.
//
// On that VM two busy goroutines ran no faster than one (its two vCPUs
// shared about one core's time), so workers above 1 bought little there;
// in busier hours its timings drifted by tens of percent between runs.
//
// This package has no compatibility promise outside quasim.
package builtin

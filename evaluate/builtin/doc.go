// Package builtin is the evaluator of quasim's built-in CPU kernels: real
// kernels written in Go whose tunable parameters change how they run (loop
// blocking, manual unrolling, packing, worker goroutines, accumulator
// precision), each with a float64 reference implementation for verification.
// They let quasimd tune something useful on any machine with no
// configuration at all.
//
// New returns a Kernel, which implements evaluate.Evaluator and
// evaluate.Verifier (see Verification). Besides the interfaces it offers Run
// (one execution of a config on given inputs), Reference (the float64
// result), NewInputs (seeded random inputs) and DefaultProblems. Every parameter's default value is the naive choice
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
//	b_input     fp32 fp16 bf16 int8 fp8_e4m3 int4   fp32
//
//	tile_m <= m or tile_m == 16      (and likewise tile_n/n, tile_k/k)
//	workers == 1 or tile_m * workers <= m
//	tile_m * tile_k + tile_k * tile_n + tile_m * tile_n <= 8192
//	b_input == 'fp32' or pack_b
//
// b_input is a precision parameter (input stage): B stored in that format
// as reduce stores its vector (scales per 256 values of B's row-major
// layout); packing decodes each panel into the float32 buffer, so only
// packed configs may store B reduced. Its bound adds the storage stage:
// rel·Σ|a||b| + (largest absolute storage error of B)·(largest row sum of
// |A|), and γ_d of Σ|a||b̂| (precision.Sum).
//
// For tests of verification only, Options.TestWrongVariant appends a fourth
// loop_order, ikj_fast: the ikj kernel minus the last partial block of
// tile_m rows, which stay zero. It is faster, right when tile_m divides m
// and wrong otherwise. Without the option the value does not exist.
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
//	input         fp32 fp16 bf16 int8 fp8_e4m3 int4   fp32
//
//	tile_x <= w - f + 1 or tile_x == 8
//	tile_y <= h - f + 1
//	workers == 1 or tile_x * tile_y * workers <= (w - f + 1) * (h - f + 1)
//	unroll <= tile_x
//	input == 'fp32' or local_buffer
//
// input is a precision parameter (input stage): the image stored in that
// format as reduce stores its vector (scales per 256 values of the
// row-major image); copying a tile into the local buffer decodes it, so
// only local_buffer configs may store the image reduced. Its bound adds
// the storage stage: rel·Σ|x||w| + (largest absolute storage error of the
// image)·Σ|w|, and γ_{f·f} of Σ|x̂||w| (precision.Sum).
//
// reduce: the sum of an fp32 n-vector, one output value; problem dim n.
// Inputs.A is the vector; B is unused. Workers take blocks of block values
// from an atomic counter and store each block's partial sum; the partials are
// added in block order, so the result is bitwise reproducible whatever the
// scheduling. unroll is the number of independent partial sums in a block.
// acc trades speed for precision: float64 (float64 partials, one rounding
// at the end), kahan (compensated float32 sums, four dependent operations
// per value), float32 (error growing with n), fp16 or bf16 (every addition
// made in float32 and rounded to the format, the first into zero too, as
// an FP16 or BF16 accumulator register holds it: emulated, so slow here).
// input is the format the vector is stored in: fp32 reads A; fp16 and
// bf16 hold it in []uint16, int8 and fp8_e4m3 in bytes, int4 two values
// to a byte, with a scale per 256 values (a power of two for fp16 and
// fp8_e4m3, as OCP's microscaling formats do, so no block overflows;
// amax/127 or amax/7 for the integers; none for bf16). The stored input
// is made once per Inputs (as a producer would write it) and decoded 256
// values at a time into a buffer the accumulator sums, in the same order
// as the fp32 path. acc and input are precision parameters (Precision):
// their values are listed most accurate first.
//
//	param    values                                   default
//	block    256 1024 4096 16384 65536 262144         256
//	unroll   1 2 4 8                                  1
//	workers  1 2 4 8                                  1
//	acc      float64 kahan float32 fp16 bf16          float32
//	input    fp32 fp16 bf16 int8 fp8_e4m3 int4        fp32
//
//	block <= n or block == 256
//	workers == 1 or block * workers <= n
//
// Valid configs per default problem (at fp32 storage, and for reduce acc
// float64, kahan or float32, as a spec without an error budget keeps
// them: sgemm 2496, 3024, 3024 and reduce 288 each):
//
//	sgemm   128x128x128: 8736   256x256x256: 10584  384x256x320: 10584
//	conv2d  256x256x5:   1112   512x512x7:   1344   1024x1024x3: 1344
//	reduce  2097152:     2880   4194304:     2880   8388608:     2880
//
// # Measurement
//
// Evaluate builds the inputs of a problem once (uniform in [-1, 1) from a
// PCG seeded with Options.Seed) and keeps them. It runs as Options.Reps
// says (evaluate.Reps): warm-up runs, then timed runs until the 95%
// confidence interval of the median time is within ±3% of it, 2 s of timed
// running have passed or 50 runs were made, never fewer than 3, by
// default. Trial.Times holds every timed run in ms, Trial.Time their
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
// # Verification
//
// Verify checks one config before it may be served. Check failures are in
// the report; an error means a bad problem, a config outside the space
// (evaluate.ErrNotInSpace), invalid settings or a cancelled context. A
// kernel that panics fails parity with the panic in Parity.Worst.
//
// Parity runs the config on these cases and compares each output element
// with the float64 reference (for reduce a compensated float64 sum, far
// more accurate than Reference's plain loop):
//
//	seed=S          NewInputs for each of VerifySettings.Seeds (default 1, 2, 3)
//	zeros           all inputs zero
//	large xF        the first seed's inputs times F: 1e18 for reduce, 1e15 for
//	                sgemm and conv2d (both inputs), lowered so no output's
//	                terms can sum past 1e36, inside float32's range
//	ragged DIMS     the first seed's problem with each tiled dim (sgemm m, n, k;
//	                conv2d's output height and width; reduce n) made a prime,
//	                a multiple of no tile or unroll: the smallest prime >= d/2,
//	                else the smallest prime > d, whichever the config is valid
//	                on; "ragged: skipped, ..." when it is valid on neither
//
// and a tolerance: abs |got-want| <= V (on the large case in units of its
// output scale); rel |got-want| <= V·max(|want|, mean |want| of the case's
// output), the mean keeping outputs near zero after cancellation from
// failing; ulp: float32 ULPs between got and float32(want) <= V. ulp is a
// poor fit for sums with cancellation (an output near zero has tiny ULPs)
// and fails most sgemm and conv2d configs. Defaults: rel 1e-4, abs 1e-3,
// ulp 64.
//
// Determinism: the first case's run and Repeats-1 more (default 3 in all)
// must give the same float32 bits, else the config fails unless the policy
// is certify. Every builtin config is bitwise reproducible.
//
// Error bound: every output element of every case is checked against an
// a-priori forward error bound for the config's precision and summation
// order, plus the reference's own error (u = 2^-24, γ_k = k·u/(1-k·u);
// a term that passes through at most d roundings gives γ_d·Σ|terms|; an
// addition into a zero accumulator is exact and not counted):
//
//	sgemm ijk, jik  γ_d·Σ_l|a_il||b_lj|, d = 1 + (floor(L/U)-1) + (U-1) + log2 U + (ceil(k/tile_k)-1),
//	                L = min(tile_k, k), U = unroll
//	sgemm ikj       γ_d·Σ_l|a_il||b_lj|, d = 1 + log2 U + (A-1), A = Σ over k-blocks of
//	                floor(L/U) + L mod U (the additions into each C element)
//	                (sgemm's d is capped at k, valid for any order; reference γ64_k·Σ)
//	conv2d          γ_{f·f}·Σ|x||w| (each output one sequential sum; reference γ64_{f·f}·Σ)
//	reduce float32  γ_d·Σ|a_i|, d = (floor(L/U)-1) + (U-1) + log2 U + (nb-1),
//	                L = min(block, n), nb = ceil(n/block)
//	reduce fp16,    γ_{d+1}(u')·Σ|a_i|, u' = (1+u_f)(1+u) - 1 (u_f = 2^-11, 2^-8), +Inf
//	  bf16          once (1+γ)·Σ|stored values| may pass the format's largest value
//	reduce float64  (1+u)·γ64_d·Σ|a_i| + u·|s| (the same tree in float64, one rounding)
//	reduce kahan    (1+u)·E·Σ|a_i| + u·|s|, E = (1+K1)(1+3u)(1+K2)(1+3u)(1+K3)(1+3u) - 1,
//	                K(m) = 2u + (4m+4)u² per Kahan level (Knuth, Goldberg), K1 = K(floor(L/U))
//	                per partial sum, K2 = K(floor(L/U) + 3(U-1)) merging them (K1 and
//	                its 3u absent for U = 1), K3 = K(2·nb) over the block pairs, 3u for
//	                each compensation handed on as a value: about 15u·Σ|a_i| + u·|s|
//	                (reduce's reference adds 2·u64·|s| + 2n²·u64²·Σ|a_i|)
//
// The kahan bound is looser than the textbook (2u + O(n·u²))·Σ|a_i| of one
// flat Kahan sum, which does not cover the kernel's three nested levels.
// With a reduced input, the stages compose (precision.Sum): the input's
// share is u_f·Σ|a_i| + Σabs_i (abs_i: half the format's subnormal spacing
// times the scale for a value below its normal range, scale·(1/2 + 2^-16)
// for an integer), the accumulator's acc·(Σ|a_i| + that), acc being the
// accumulator's factor above (γ_d, E, ...), then the output rounding.
//
// Error budget: with VerifySettings.Budget, every element of every case
// has its bound and its measured error converted to the budget's units
// (rel: divided by max(|ref|, the case's mean |ref|); abs: by the case's
// output scale; ulp: by float32's spacing at ref, plus one); the config
// passes when the largest of each is within the budget. The report gives
// the precision map, each stage's share of the bound where it is largest,
// and the measured error. VerifySettings.Inputs positive verifies on the
// magnitudes of the seeded inputs (a sum of positive values: Σ|a_i| = |s|).
// The report gives the element with the largest measured/bound ratio.
//
// Verification times nothing: a certificate's latency is measured after
// it, by the search's own protocol (Evaluate, in internal/tuner), so a
// config has one timing protocol.
//
// Measured on the 2-core development VM (Intel Xeon, KVM, shared with other
// work) at n = 2^24, config block 65536, unroll 8, workers 1, tolerance
// rel 1e-7, seed 1 plus the edge cases:
//
//	go test ./evaluate/builtin -run '^$' -bench ReduceErrorBounds -benchtime 1x -v
//
//	inputs           acc      bound (seed 1)      measured (seed 1)   worst ratio  max rel err  parity
//	positive [0,1)   float32  4230 (5.0e-4·|s|)   0.234 (2.8e-8·|s|)  7.2e-4       3.7e-7       FAIL
//	sum 8.3876e6     float64  0.500 (6.0e-8·|s|)  0.234 (2.8e-8·|s|)  0.47         2.8e-8       pass
//	                 kahan    8.00 (9.5e-7·|s|)   0.234 (2.8e-8·|s|)  0.029        2.8e-8       pass
//	signed [-1,1)    float32  4230                1.0e-3 (5.0e-7·|s|) 9.5e-7       1.9e-6       FAIL
//	sum -2097.8,     float64  1.33e-4             7.2e-5 (3.4e-8·|s|) 0.57         3.5e-8       pass
//	Σ|a| 8.3876e6    kahan    7.50                1.7e-4 (8.2e-8·|s|) 2.3e-5       8.2e-8       pass
//
// Every bound held. float32's bound (γ_8456) is about 1400 times its actual
// error, the usual gap between worst case and rounding errors that cancel;
// float64's is tight (its error is the final rounding to float32). With
// this config float32's error is 0.3e-7 to 4e-7 of the sum on positive
// inputs, depending on the seed (seed 1 happened to round like float64),
// so it fails rel 1e-7 on some cases; block 256, unroll 1 gives 1e-6 to
// 7e-6. TestReduceTightTolerance asserts the verdicts with the default
// seeds.
//
// What verification costs next to measuring, for a good sgemm config
// (16,128,16,8,1,True,ikj) at 512x512x512 with the default settings:
//
//	go test ./evaluate/builtin -run '^$' -bench VerifySgemm512 -benchtime 3x -v
//
//	Verify 3.6 s; one Evaluate 1.7 s (a run is 157 ms)
//	Verify = 2.1 Evaluates = 3.5% of a 60-evaluation cycle of this config
//
// measured at a load average of 12 on the 2 cores (other builds beside
// it), so every time is slowed alike. The Verify time is kernel runs (6
// cases, 2 more for determinism) and the float64 references (run on all
// cores); the certificate's latency rounds come on top (6 Evaluates of
// the config and 6 of the default). It is well under a fifth of a cycle's
// measuring, so the defaults keep three seeds.
//
// # Zoning
//
// Zone tunes the precision map of a chain: a conv2d or sgemm whose outputs
// a reduce sums. Every combination of the two kernels' precision
// parameters (their other parameters held at given configs) is run on
// seeded inputs, the upstream's output fed to the reduce as its vector;
// its a-priori bound is the upstream's per-output bounds summed (a sum
// passes them through unamplified, precision.ThroughLinear) plus the
// reduce's own bound on the values it received, and its error is measured
// against the float64 reference of the whole chain (the upstream's
// reference outputs summed with compensation). A map is certified when
// both fit the one budget of the chain; Zoning.BestWithin gives what
// budgets split per kernel would serve instead.
//
// This package has no compatibility promise outside quasim.
package builtin

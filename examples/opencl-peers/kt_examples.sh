#!/bin/bash
# Kernel Tuner's own OpenCL examples, as both tuners take them: writes, under
# $PEERS/kt-examples, a quasim spec (NAME.yaml) and a run_kt.py description
# (NAME_cl.json) for each, over the example's source in the fetched copy of
# Kernel Tuner's repository (setup.sh). Nothing here is vendored; the
# sources are read where setup.sh put them.
#
#   reduction: examples/opencl/reduction.cl unchanged (sum_floats), its first
#     kernel as reduction.py tunes it, at n = 2^24 floats (the example uses
#     800M): num_blocks work-groups, the output's partial sums checked by
#     their sum, as the example's verify_partial_reduce. loop_unroll_factor
#     0 is left out (432 of the example's 540 configs): pocl's clang refuses
#     "#pragma unroll 0", and Kernel Tuner stops its whole run at that
#     build error.
#   matmul: examples/opencl/matmul.cl with its "#define WIDTH 4096" made
#     512 (a copy under $PEERS/kt-examples, the only line changed), tuned
#     as matmul.py tunes it (44 configs under its restriction), checked
#     against a reference config (Kernel Tuner: numpy.dot, atol 1e-3).
#   convolution: examples/opencl/convolution.cl with its image_height and
#     image_width defines made 512 (a copy, only those lines changed), as
#     convolution.py tunes it (432 configs), checked against a reference
#     config by both (the example checks nothing).
#
# Then, for example:
#   quasimctl bench live $PEERS/kt-examples/reduction.yaml --brute-force --cache reduction.cache.json
#   BUDGET=100 examples/opencl-peers/live.sh reduction reduction.cache.json runs bayes_opt
set -euo pipefail
PEERS=${PEERS:-/work/peers}
src=$PEERS/src/kernel_tuner/examples/opencl
out=$PEERS/kt-examples
[ -f "$src/reduction.cl" ] || { echo "kt_examples.sh: no $src/reduction.cl: run setup.sh first" >&2; exit 1; }
mkdir -p "$out"
n=16777216

cat >"$out/reduction.yaml" <<EOF
# Kernel Tuner's reduction example (its repository's examples/opencl/reduction.cl,
# unchanged), written by examples/opencl-peers/kt_examples.sh.
name: kt-reduction
evaluator: opencl
problem_dims: [n]
problems: ["$n"]
opencl:
  source: $src/reduction.cl
  kernel: sum_floats
  tune_params:
    block_size_x: [32, 64, 128, 256, 512, 1024]
    vector: [1, 2, 4]
    num_blocks: [32, 64, 128, 256, 512, 1024]
    loop_unroll_factor: [1, 8, 16, 32]
  problem_size: [num_blocks]
  grid_div_x: []
  args:
    - {name: sum_global, type: float, size: "1024", fill: zero, output: true}
    - {name: array, type: float, size: "n", fill: random, seed: 1}
    - {name: n, type: int, value: "n"}
  check:
    reference: {block_size_x: 256, vector: 1, num_blocks: 32, loop_unroll_factor: 1}
    compare: sum
    tolerance: {rel: 1e-4}
EOF

cat >"$out/reduction_cl.json" <<EOF
{
 "kernel_source": "$src/reduction.cl",
 "kernel_name": "sum_floats",
 "problem_size": "num_blocks",
 "tune_params": {
  "block_size_x": [32, 64, 128, 256, 512, 1024],
  "vector": [1, 2, 4],
  "num_blocks": [32, 64, 128, 256, 512, 1024],
  "loop_unroll_factor": [1, 8, 16, 32]
 },
 "grid_div_x": [],
 "args": [
  {"name": "sum_global", "type": "float", "size": 1024, "fill": "zero"},
  {"name": "x", "type": "float", "size": $n, "fill": "random", "seed": 1},
  {"name": "n", "type": "int", "scalar": true, "value": $n}
 ],
 "verify": {"index": 0, "reference_expr": "numpy.sum(x, dtype=numpy.float64)", "compare": "sum", "rtol": 1e-4}
}
EOF

# Kernel Tuner's matmul and convolution examples, their fixed sizes made 512.
n=512
sed 's/^#define WIDTH 4096$/#define WIDTH 512/' "$src/matmul.cl" >"$out/matmul.cl"
sed -e 's/^#define image_height 4096$/#define image_height 512/' -e 's/^#define image_width 4096$/#define image_width 512/' \
	"$src/convolution.cl" >"$out/convolution.cl"
grep -q '^#define WIDTH 512$' "$out/matmul.cl" || { echo "kt_examples.sh: $src/matmul.cl has no '#define WIDTH 4096' line to change" >&2; exit 1; }
[ "$(grep -c '^#define image_\(height\|width\) 512$' "$out/convolution.cl")" = 2 ] ||
	{ echo "kt_examples.sh: $src/convolution.cl lacks its image_height/image_width 4096 defines" >&2; exit 1; }

cat >"$out/matmul.yaml" <<EOF
# Kernel Tuner's matmul example (its examples/opencl/matmul.cl, WIDTH 512),
# written by examples/opencl-peers/kt_examples.sh.
name: kt-matmul
evaluator: opencl
problem_dims: [n]
problems: ["$n"]
opencl:
  source: $out/matmul.cl
  kernel: matmul_kernel
  tune_params:
    block_size_x: [16, 32, 64]
    block_size_y: [1, 2, 4, 8, 16, 32]
    tile_size_x: [1, 2, 4, 8]
    tile_size_y: [1, 2, 4, 8]
  problem_size: [n, n]
  grid_div_x: [block_size_x, tile_size_x]
  grid_div_y: [block_size_y, tile_size_y]
  args:
    - {name: C, type: float, size: "n*n", fill: zero, output: true}
    - {name: A, type: float, size: "n*n", fill: random, seed: 1}
    - {name: B, type: float, size: "n*n", fill: random, seed: 2}
  check:
    reference: {block_size_x: 16, block_size_y: 16, tile_size_x: 1, tile_size_y: 1}
    tolerance: {rel: 1e-4}
constraints:
  - block_size_x == block_size_y * tile_size_y
EOF

cat >"$out/matmul_cl.json" <<EOF
{
 "kernel_source": "$out/matmul.cl",
 "kernel_name": "matmul_kernel",
 "problem_size": [$n, $n],
 "tune_params": {
  "block_size_x": [16, 32, 64],
  "block_size_y": [1, 2, 4, 8, 16, 32],
  "tile_size_x": [1, 2, 4, 8],
  "tile_size_y": [1, 2, 4, 8]
 },
 "restrictions": ["block_size_x==block_size_y*tile_size_y"],
 "grid_div_x": ["block_size_x", "tile_size_x"],
 "grid_div_y": ["block_size_y", "tile_size_y"],
 "args": [
  {"name": "C", "type": "float", "size": $((n * n)), "fill": "zero"},
  {"name": "A", "type": "float", "size": $((n * n)), "fill": "random", "seed": 1},
  {"name": "B", "type": "float", "size": $((n * n)), "fill": "random", "seed": 2}
 ],
 "verify": {"index": 0, "atol": 1e-3, "reference_expr": "numpy.dot(A.reshape($n, $n), B.reshape($n, $n)).ravel()"}
}
EOF

cat >"$out/convolution.yaml" <<EOF
# Kernel Tuner's convolution example (its examples/opencl/convolution.cl,
# 512 x 512), written by examples/opencl-peers/kt_examples.sh.
name: kt-convolution
evaluator: opencl
problem_dims: [n]
problems: ["$n"]
opencl:
  source: $out/convolution.cl
  kernel: convolution_kernel
  tune_params:
    block_size_x: [16, 32, 48, 64, 80, 96, 112, 128]
    block_size_y: [1, 2, 4, 8, 16, 32]
    tile_size_x: [1, 2, 4]
    tile_size_y: [1, 2, 4]
  problem_size: [n, n]
  grid_div_x: [block_size_x, tile_size_x]
  grid_div_y: [block_size_y, tile_size_y]
  args:
    - {name: output, type: float, size: "n*n", fill: zero, output: true}
    - {name: input, type: float, size: "(n+16)*(n+16)", fill: random, seed: 1}
    - {name: filter, type: float, size: "17*17", fill: random, seed: 2}
  check:
    reference: {block_size_x: 16, block_size_y: 16, tile_size_x: 1, tile_size_y: 1}
    tolerance: {rel: 1e-4}
EOF

cat >"$out/convolution_cl.json" <<EOF
{
 "kernel_source": "$out/convolution.cl",
 "kernel_name": "convolution_kernel",
 "problem_size": [$n, $n],
 "tune_params": {
  "block_size_x": [16, 32, 48, 64, 80, 96, 112, 128],
  "block_size_y": [1, 2, 4, 8, 16, 32],
  "tile_size_x": [1, 2, 4],
  "tile_size_y": [1, 2, 4]
 },
 "grid_div_x": ["block_size_x", "tile_size_x"],
 "grid_div_y": ["block_size_y", "tile_size_y"],
 "args": [
  {"name": "output", "type": "float", "size": $((n * n)), "fill": "zero"},
  {"name": "input", "type": "float", "size": $(((n + 16) * (n + 16))), "fill": "random", "seed": 1},
  {"name": "filter", "type": "float", "size": 289, "fill": "random", "seed": 2}
 ],
 "verify": {"index": 0, "atol": 1e-3, "reference_config": {"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1}}
}
EOF
echo "$out: reduction, matmul and convolution (.yaml for quasim, _cl.json for run_kt.py)"

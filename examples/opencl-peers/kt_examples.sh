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
echo "$out: reduction.yaml reduction_cl.json"

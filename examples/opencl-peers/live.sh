#!/bin/bash
# Side by side on this machine's OpenCL device: quasim (quasimctl bench live)
# and Kernel Tuner (run_kt.py) on the same kernel, problem and budget,
# interleaved seed by seed, one tuner at a time. Each run starts with an
# empty pocl kernel cache of its own (bench live's default; run_kt.py's
# --compile-cache fresh, with PYOPENCL_NO_CACHE=1), so every config is
# compiled once a run, as on a first run; quasim's compile helpers build a
# generation side by side through it. Run it on an otherwise idle machine.
#
#   live.sh KERNEL BRUTE_FORCE_CACHE OUT_DIR [KT_STRATEGY...]
#     KERNEL: matmul or convolution (examples/opencl/KERNEL.yaml and KERNEL_cl_256.json here),
#       or any other with SPEC (quasim's spec) and KTJSON (run_kt.py's description) set
#   env: PEERS (setup.sh's prefix, default /work/peers), QUASIMCTL (default quasimctl),
#        BUDGET (default 50), SEEDS (default "1 2 3 4 5"),
#        QUASIM (default "race"; "race norace" also runs quasim with --no-race)
set -euo pipefail
k=$1 cache=$2 out=$3; shift 3
strategies=${*:-bayes_opt genetic_algorithm simulated_annealing random_sample}
here=$(cd "$(dirname "$0")" && pwd)
PEERS=${PEERS:-/work/peers} QUASIMCTL=${QUASIMCTL:-quasimctl} B=${BUDGET:-50}
mkdir -p "$out"
ulimit -s 262144 # pocl keeps work-items' private data on its threads' stacks
for s in ${SEEDS:-1 2 3 4 5}; do
	for q in ${QUASIM:-race}; do
		name=quasim flag=
		[ "$q" = norace ] && name=quasim-norace flag=--no-race
		echo "$(date +%T) $k $name seed $s" >&2
		"$QUASIMCTL" bench live "${SPEC:-$here/../opencl/$k.yaml}" --strategy portfolio --budget "$B" --seed "$s" $flag \
			--optimum "$cache" --json "$out/$k.$name.b$B.s$s.json" --quiet >/dev/null
	done
	for st in $strategies; do
		echo "$(date +%T) $k $st seed $s" >&2
		PEERS=$PEERS "$PEERS/venv/bin/python" "$here/run_kt.py" "${KTJSON:-$here/${k}_cl_256.json}" --strategy "$st" \
			--max-fevals "$B" --budget unique --seed "$s" --out "$out/$k.$st.b$B.s$s.json" --compile-cache fresh --quiet 2>/dev/null
	done
done

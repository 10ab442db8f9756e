#!/bin/sh
# compare.sh: tune matmul_harness with a real quasimd and set the served
# config beside OpenBLAS's sgemm (Debian's libopenblas-dev) at the same sizes,
# single-threaded both, as GFLOP/s and as fractions of the CPU's one-thread
# FMA peak that quasimd measured. The builtin sgemm (Go, up to 8 workers) is
# tuned at the same sizes too and set against the all-threads peak.
# Run from the repository root:
#   sh examples/harness-c/compare.sh [EVALS] [SIZES...]
# (defaults: 60 evaluations a size; sizes 256 512 1024). It takes a few
# minutes and uses a temporary state directory.
set -eu
evals=${1:-60}
[ $# -gt 0 ] && shift
sizes=${*:-256 512 1024}
tmp=$(mktemp -d)
trap 'kill $qd 2>/dev/null; wait $qd 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/quasimd" ./cmd/quasimd
go build -o "$tmp/quasimctl" ./cmd/quasimctl
cc -O3 -march=native -ffp-contract=fast -std=c99 -o "$tmp/matmul_harness" examples/harness-c/matmul_harness.c
cc -O2 -std=c99 -o "$tmp/sgemm_openblas" examples/harness-c/sgemm_openblas.c -lopenblas
mkdir "$tmp/kernels.d"
problems=$(printf '"%s",' $sizes)
cat > "$tmp/kernels.d/matmul.yaml" <<SPEC
name: matmul
evaluator: exec:$tmp/matmul_harness
problems: [${problems%,}]
schedule: "@every 24h"
budget: {evals: $evals}
timeout: 60s
SPEC
problems3=$(printf '"%s,%s,%s",' $(for n in $sizes; do echo "$n $n $n"; done))
cat > "$tmp/kernels.d/sgemm.yaml" <<SPEC
name: sgemm
evaluator: builtin:sgemm
problems: [${problems3%,}]
schedule: "@every 24h"
budget: {evals: $evals}
SPEC
sock=$tmp/q.sock
"$tmp/quasimd" --socket "$sock" --state-dir "$tmp/state" --kernels "$tmp/kernels.d" --lock-dir "" --idle-cpu 0 --log-level warn 2>"$tmp/quasimd.log" &
qd=$!
ctl() { "$tmp/quasimctl" --socket "$sock" "$@"; }
i=0
until ctl devices --json 2>/dev/null | grep -q '"gflops_thread"'; do
	i=$((i + 1)); [ $i -lt 600 ] || { echo "no ceilings measured"; cat "$tmp/quasimd.log"; exit 1; }
	sleep 0.1
done
peak=$(ctl devices --json | sed -n 's/.*"gflops_thread": *\([0-9.]*\).*/\1/p')
peakall=$(ctl devices --json | sed -n 's/.*"gflops": *\([0-9.]*\).*/\1/p')
bw=$(ctl devices --json | sed -n 's/.*"bandwidth_gbs": *\([0-9.]*\).*/\1/p')
echo "float32 FMA peak measured by quasimd: $peak GFLOP/s on one thread, $peakall on all; copy $bw GB/s"
# The first cycles start on their own at startup; wait for them to end.
for n in $sizes; do
	ctl tune matmul --problem "$n" --wait >/dev/null 2>&1 || true
	ctl tune sgemm --problem "$n,$n,$n" --wait >/dev/null 2>&1 || true
done
# OpenBLAS with the kernel it picks for this CPU (OPENBLAS_CORETYPE, set on
# some machines to work around old builds, would force another).
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 "$tmp/sgemm_openblas" $sizes > "$tmp/openblas.txt"
head -1 "$tmp/openblas.txt"
printf '%6s  %-44s %10s %9s %9s  %10s %9s %9s  %s\n' n "quasim-tuned harness config" ms GFLOP/s "of peak" "OpenBLAS ms" GFLOP/s "of peak" "harness/OpenBLAS time"
for n in $sizes; do
	js=$(ctl config matmul --problem "$n" --json)
	key=$(echo "$js" | sed -n 's/.*"key": *"\([^"]*\)".*/\1/p' | head -1)
	ms=$(echo "$js" | sed -n 's/.*"time_ms": *\([0-9.e+-]*\).*/\1/p' | head -1)
	# The default config (the harness's hello), timed the same way: best of 5.
	default=$(printf '{"config":{"block_i":8,"block_j":8,"block_k":8,"micro":"4x16","order":"ijk"},"id":1,"problem":[%s],"repetitions":5,"type":"run"}\n' "$n" |
		"$tmp/matmul_harness" | sed -n 's/.*"times_ms":\[\([^]]*\)\].*/\1/p' | tr ',' '\n' | sort -g | head -1)
	ob=$(awk -v n="$n" '$1 == n { print $3 }' "$tmp/openblas.txt")
	awk -v n="$n" -v key="$key" -v ms="$ms" -v ob="$ob" -v peak="$peak" -v def="$default" 'BEGIN {
		f = 2 * n * n * n / 1e6
		printf "%6d  %-44s %10.3f %9.1f %9.2f  %10.3f %9.1f %9.2f  %.2f\n", n, key, ms, f / ms, f / ms / peak, ob, f / ob, f / ob / peak, ms / ob
		if (def != "") printf "        default config 8,8,8,ijk,4x16: %.3f ms (%.1f GFLOP/s): %.0fx the tuned time\n", def, f / def, def / ms
	}'
done
printf '\n%6s  %-44s %10s %9s %9s\n' n "quasim-tuned builtin sgemm config" ms GFLOP/s "of all-threads peak"
for n in $sizes; do
	js=$(ctl config sgemm --problem "$n,$n,$n" --json)
	key=$(echo "$js" | sed -n 's/.*"key": *"\([^"]*\)".*/\1/p' | head -1)
	ms=$(echo "$js" | sed -n 's/.*"time_ms": *\([0-9.e+-]*\).*/\1/p' | head -1)
	awk -v n="$n" -v key="$key" -v ms="$ms" -v peak="$peakall" 'BEGIN {
		f = 2 * n * n * n / 1e6
		printf "%6d  %-44s %10.3f %9.1f %9.3f\n", n, key, ms, f / ms, f / ms / peak
	}'
done

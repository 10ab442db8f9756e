#!/bin/sh
# precision.sh: tune matmul_harness's fp32 and fp16 storage of B (b_storage)
# with a real quasimd, each as its own job (order packed, where the fp16
# panels are), the fp16 one under a rel error budget, and set their served
# configs side by side; then time the fp32-served blocking with each storage
# in the same process, alternating, so the two differ only in b_storage.
# Run from the repository root:
#   sh examples/harness-c/precision.sh [EVALS] [BUDGET] [SIZES...]
# (defaults: 30 evaluations a size, rel budget 1e-2, sizes 256 512).
set -eu
evals=${1:-30}
[ $# -gt 0 ] && shift
budget=${1:-1e-2}
[ $# -gt 0 ] && shift
sizes=${*:-256 512}
tmp=$(mktemp -d)
trap 'kill $qd 2>/dev/null; wait $qd 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/quasimd" ./cmd/quasimd
go build -o "$tmp/quasimctl" ./cmd/quasimctl
cc -O3 -march=native -ffp-contract=fast -std=c99 -o "$tmp/matmul_harness" examples/harness-c/matmul_harness.c
mkdir "$tmp/kernels.d"
problems=$(printf '"%s",' $sizes)
for s in fp32 fp16; do
	verify=""
	[ $s = fp16 ] && verify="verify: {error_budget: {rel: $budget}}"
	cat > "$tmp/kernels.d/mm$s.yaml" <<SPEC
name: mm$s
evaluator: exec:$tmp/matmul_harness
problems: [${problems%,}]
parameters: {order: [packed], b_storage: [$s]}
schedule: "@every 24h"
budget: {evals: $evals}
timeout: 60s
$verify
SPEC
done
sock=$tmp/q.sock
"$tmp/quasimd" --socket "$sock" --state-dir "$tmp/state" --kernels "$tmp/kernels.d" --lock-dir "" --idle-cpu 0 --log-level warn 2>"$tmp/quasimd.log" &
qd=$!
ctl() { "$tmp/quasimctl" --socket "$sock" "$@"; }
i=0
until ctl status >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 600 ] || { echo "quasimd did not start"; cat "$tmp/quasimd.log"; exit 1; }
	sleep 0.1
done
for n in $sizes; do
	for s in fp32 fp16; do ctl tune mm$s --problem "$n" --wait >/dev/null 2>&1 || true; done
done
printf '%6s  %-6s %-30s %10s %9s  %s\n' n B "served config" ms GFLOP/s "error_budget check"
for n in $sizes; do
	for s in fp32 fp16; do
		js=$(ctl config mm$s --problem "$n" --json)
		key=$(echo "$js" | sed -n 's/.*"key": *"\([^"]*\)".*/\1/p' | head -1)
		ms=$(echo "$js" | sed -n 's/.*"time_ms": *\([0-9.e+-]*\).*/\1/p' | head -1)
		cert=$(echo "$js" | sed -n 's/.*"certificate": *"\([^"]*\)".*/\1/p' | head -1)
		match=$(echo "$js" | sed -n 's/.*"match": *"\([^"]*\)".*/\1/p' | head -1)
		chk="-"
		if [ "$match" != exact ] || [ -z "$cert" ]; then
			printf '%6d  %-6s nothing certified (the config answer: %s)\n' "$n" "$s" "${match:-none}"
			continue
		fi
		[ $s = fp16 ] && chk=$(ctl certs show "$cert" --json | tr -d ' \n' | sed -n 's/.*"error_budget"\(.*\)/\1/p' |
			sed -n 's/^,"passed":\([a-z]*\),"results":{[^}]*"bound":\([^,]*\),"measured_err":\([^,]*\),.*/passed \1: bound \2, measured \3 (rel budget '"$budget"')/p')
		awk -v n="$n" -v s="$s" -v key="$key" -v ms="$ms" -v chk="${chk:--}" 'BEGIN {
			printf "%6d  %-6s %-30s %10.3f %9.1f  %s\n", n, s, key, ms, 2 * n * n * n / 1e6 / ms, chk
		}'
	done
done
echo
echo "the fp32-served blocking at each storage, alternating in one harness process (7 rounds of 9 runs; median of all, ms):"
for n in $sizes; do
	key=$(ctl config mmfp32 --problem "$n" --json | sed -n 's/.*"key": *"\([^"]*\)".*/\1/p' | head -1)
	[ -n "$key" ] || continue
	IFS=, read bi bj bk order micro bs <<K
$key
K
	printf '{"config":{"b_storage":"fp16","block_i":%s,"block_j":%s,"block_k":%s,"micro":"%s","order":"%s"},"error_kind":"rel","id":1,"problem":[%s],"repetitions":1,"type":"run","verify":true}\n' \
		"$bi" "$bj" "$bk" "$micro" "$order" "$n" | "$tmp/matmul_harness" |
		sed -n 's/.*"measured":\([^,]*\),"bound":\([^,]*\),.*/\1 \2/p' |
		awk -v n="$n" '{ printf "%6d  fp16 error (the harness'"'"'s answer): measured %.3g, a-priori bound %.3g\n", n, $1, $2 }'
	for r in 1 2 3 4 5 6 7; do
		for s in fp32 fp16; do
			printf '{"config":{"b_storage":"%s","block_i":%s,"block_j":%s,"block_k":%s,"micro":"%s","order":"%s"},"id":%d,"problem":[%s],"repetitions":9,"type":"run"}\n' \
				"$s" "$bi" "$bj" "$bk" "$micro" "$order" "$r" "$n"
		done
	done | "$tmp/matmul_harness" | sed -n 's/.*"times_ms":\[\([^]]*\)\].*/\1/p' | awk -v n="$n" -v key="$key" '
		NR % 2 == 1 { k = "fp32" } NR % 2 == 0 { k = "fp16" }
		{ m = split($0, t, ","); for (i = 2; i <= m; i++) v[k, ++c[k]] = t[i] }  # the first run of each request warms up
		function median(k,   i, j, x, a, m) { m = c[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
			for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
		END { a = median("fp32"); b = median("fp16")
			printf "%6d  %-30s fp32 %8.3f ms  fp16 %8.3f ms  fp16/fp32 time %.2f\n", n, key, a, b, b / a }'
done

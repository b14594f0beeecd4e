#!/usr/bin/env bash
# Regenerates the screenshots of the HTML report in docs/images/ (headless Chromium, no network):
# a blocked model and a ready one, as docs/reports.md shows them. BIN defaults to build/tpu-doctor.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tpu-doctor}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shot() {  # shot NAME HEIGHT CHECK-ARGS...
  local name=$1 height=$2
  shift 2
  "$BIN" check "$@" --format html >"$work/$name.html" || [[ $? == 1 ]]
  chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --disable-background-networking --disable-component-update --disable-sync \
    --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$work/profile" \
    --window-size=1200,"$height" --screenshot="docs/images/$name.png" "file://$work/$name.html" \
    2>/dev/null
  echo "docs/images/$name.png"
}
shot report-blocked 1000 testdata/models/nonzero_mask.onnx --batch 8
shot report-ready 1450 examples/resnet50.onnx --train --batch 64

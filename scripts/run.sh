#!/usr/bin/env bash
# Set-up, build, then `tpu-doctor check` on the given model and flags. Without arguments, a tour of
# what the tool answers, on the examples bundled in examples/: a detector that cannot run on a TPU
# as exported (why, where, and the fix), the cost of a training step across TPU generations and a
# GPU, and the slice, sharding and cost of fine-tuning an LLM by a deadline.
set -euo pipefail
cd "$(dirname "$0")/.."
# Set-up and build talk on stderr, so stdout is only tpu-doctor's report (e.g. with --format json).
scripts/setup.sh >&2
scripts/build.sh >&2
if (($# > 0)); then
  exec build/tpu-doctor check "$@"
fi
step() {
  printf '\n\033[1m== %s\033[0m\n$ tpu-doctor %s\n\n' "$1" "${*:2}"
  build/tpu-doctor "${@:2}" || true  # a blocked model exits 1; the tour goes on
}
table() {  # `estimate`'s table; the per-target details (top ops, memory, assumptions) follow it
  printf '\n\033[1m== %s\033[0m\n$ tpu-doctor %s\n\n' "$1" "${*:2}"
  build/tpu-doctor "${@:2}" | awk '/where the time goes/ && !cut {cut = 1; print "(then, per target: where the time goes, memory, assumptions)"} !cut'
}
step "Will it run on a TPU? (torchvision's Faster R-CNN, exported to ONNX)" \
  check examples/fasterrcnn_resnet50_fpn.onnx
table "How fast, at what cost? (ResNet-50 training, batch 64 per chip)" \
  estimate examples/resnet50.onnx --train --batch 64 --targets v5e-8,v6e-8,v5p-8,nvidia-h100-8
step "Which slice for a fine-tune of 2B tokens within 24 hours? (Llama 3.1 8B)" \
  plan examples/configs/llama-3.1-8b.json --seq 4096 --tokens 2e9 --deadline 24 --fine-tune
printf '\nNext: tpu-doctor check YOUR_MODEL (ONNX, .pt2, Keras, SavedModel, HLO/StableHLO, a HF config, train.py); tpu-doctor logs worker-0.log; see README.md.\n'

#!/usr/bin/env bash
# Create the TPU VM(s) for: v6e-1 (1x1), data=1, remat none, global batch 256 (planned by tpu-doctor for examples/resnet50.onnx)
set -euo pipefail
PROJECT=PROJECT_ID
ZONE=us-central1-b
NAME=tpu-doctor-train

# Directly (fails when the zone has no capacity now):
gcloud compute tpus tpu-vm create "$NAME" --project="$PROJECT" --zone="$ZONE" \
  --accelerator-type=v6e-1 --version=v2-alpha-tpuv6e

# Or queued (waits for capacity; add --spot or --reserved as your quota allows):
# gcloud compute tpus queued-resources create "$NAME-qr" --project="$PROJECT" --zone="$ZONE" \
#   --node-id="$NAME" --accelerator-type=v6e-1 --runtime-version=v2-alpha-tpuv6e

# Run the training script on every host of the slice (1 host):
gcloud compute tpus tpu-vm scp train.py "$NAME": --project="$PROJECT" --zone="$ZONE" --worker=all
gcloud compute tpus tpu-vm ssh "$NAME" --project="$PROJECT" --zone="$ZONE" --worker=all \
  --command="PJRT_DEVICE=TPU python3 train.py --per_device_batch=256 --global_batch=256"

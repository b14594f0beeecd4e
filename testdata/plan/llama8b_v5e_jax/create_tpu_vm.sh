#!/usr/bin/env bash
# Create the TPU VM(s) for: v5litepod-32 (4x8), fsdp=8,tp=4, remat none, global batch 8 (planned by tpu-doctor for examples/configs/llama-3.1-8b.json)
set -euo pipefail
PROJECT=PROJECT_ID
ZONE=us-central1-a
NAME=tpu-doctor-train

# Directly (fails when the zone has no capacity now):
gcloud compute tpus tpu-vm create "$NAME" --project="$PROJECT" --zone="$ZONE" \
  --accelerator-type=v5litepod-32 --version=v2-alpha-tpuv5-lite

# Or queued (waits for capacity; add --spot or --reserved as your quota allows):
# gcloud compute tpus queued-resources create "$NAME-qr" --project="$PROJECT" --zone="$ZONE" \
#   --node-id="$NAME" --accelerator-type=v5litepod-32 --runtime-version=v2-alpha-tpuv5-lite

# Run the training script on every host of the slice (8 hosts):
gcloud compute tpus tpu-vm scp train.py "$NAME": --project="$PROJECT" --zone="$ZONE" --worker=all
gcloud compute tpus tpu-vm ssh "$NAME" --project="$PROJECT" --zone="$ZONE" --worker=all \
  --command="python3 train.py --per_device_batch=0.25 --global_batch=8 --ici_fsdp_parallelism=8 --ici_tensor_parallelism=4"

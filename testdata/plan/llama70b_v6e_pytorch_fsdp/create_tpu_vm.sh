#!/usr/bin/env bash
# Create the TPU VM(s) for: v6e-256 (16x16), fsdp=64,tp=4, remat none, global batch 128 (planned by tpu-doctor for examples/configs/llama-3.1-70b.json)
set -euo pipefail
PROJECT=PROJECT_ID
ZONE=us-central1-b
NAME=tpu-doctor-train

# Directly (fails when the zone has no capacity now):
gcloud compute tpus tpu-vm create "$NAME" --project="$PROJECT" --zone="$ZONE" \
  --accelerator-type=v6e-256 --version=v2-alpha-tpuv6e

# Or queued (waits for capacity; add --spot or --reserved as your quota allows):
# gcloud compute tpus queued-resources create "$NAME-qr" --project="$PROJECT" --zone="$ZONE" \
#   --node-id="$NAME" --accelerator-type=v6e-256 --runtime-version=v2-alpha-tpuv6e

# Run the training script on every host of the slice (64 hosts):
gcloud compute tpus tpu-vm scp train.py "$NAME": --project="$PROJECT" --zone="$ZONE" --worker=all
gcloud compute tpus tpu-vm ssh "$NAME" --project="$PROJECT" --zone="$ZONE" --worker=all \
  --command="PJRT_DEVICE=TPU python3 train.py --per_device_batch=0.50 --global_batch=128 --ici_fsdp_parallelism=64 --ici_tensor_parallelism=4"

#!/usr/bin/env bash
# Create the TPU VM(s) for: v3-8 (2x2), data=8, remat none, global batch 2048 (planned by tpu-doctor for examples/configs/bert-base-uncased.json)
set -euo pipefail
PROJECT=PROJECT_ID
ZONE=us-central1-a
NAME=tpu-doctor-train

# Directly (fails when the zone has no capacity now):
gcloud compute tpus tpu-vm create "$NAME" --project="$PROJECT" --zone="$ZONE" \
  --accelerator-type=v3-8 --version=tpu-vm-tf-2.16.1

# Or queued (waits for capacity; add --spot or --reserved as your quota allows):
# gcloud compute tpus queued-resources create "$NAME-qr" --project="$PROJECT" --zone="$ZONE" \
#   --node-id="$NAME" --accelerator-type=v3-8 --runtime-version=tpu-vm-tf-2.16.1

# Run the training script on every host of the slice (1 host):
gcloud compute tpus tpu-vm scp train.py "$NAME": --project="$PROJECT" --zone="$ZONE" --worker=all
gcloud compute tpus tpu-vm ssh "$NAME" --project="$PROJECT" --zone="$ZONE" --worker=all \
  --command="python3 train.py --per_device_batch=256 --global_batch=2048"

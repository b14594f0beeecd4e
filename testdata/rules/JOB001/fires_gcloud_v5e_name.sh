#!/usr/bin/env bash
gcloud compute tpus tpu-vm create my-tpu --zone=us-west4-a \
  --accelerator-type=v5e-16 --version=v2-alpha-tpuv5-lite

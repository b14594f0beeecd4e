gcloud compute tpus queued-resources create qr --node-id=n --zone=us-west4-a \
  --accelerator-type=v5p-32 --runtime-version=v2-alpha-tpuv5

gcloud compute tpus tpu-vm create t --zone=us-west4-a --accelerator-type=v5litepod-8 --version=v2-alpha-tpuv5-lite
gcloud compute tpus tpu-vm ssh t --zone=us-west4-a --worker=all --command="python3 train.py --global_batch=100"

ACCELERATOR_TYPE=v6e-8
RUNTIME_VERSION=v2-alpha-tpuv6e
gcloud compute tpus tpu-vm create t --zone=us-east5-b --accelerator-type=$ACCELERATOR_TYPE --version=$RUNTIME_VERSION

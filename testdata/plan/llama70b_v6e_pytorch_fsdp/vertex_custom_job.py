# Vertex AI CustomJob through the Python SDK: v6e-256 (16x16), fsdp=64,tp=4, remat none, global batch 128 (planned by tpu-doctor for examples/configs/llama-3.1-70b.json)
from google.cloud import aiplatform

aiplatform.init(project="PROJECT_ID", location="us-central1", staging_bucket="gs://BUCKET")

job = aiplatform.CustomJob(
    display_name="tpu-doctor-train",
    worker_pool_specs=[
        {
            "machine_spec": { "machine_type": "ct6e-standard-4t", "tpu_topology": "16x16" },
            # One replica: Vertex AI provisions every host of the TPU slice from the topology.
            "replica_count": 1,
            "container_spec": {
                "image_uri": "IMAGE_URI",
                "command": ["python3", "train.py"],
                "args": ["--per_device_batch=0.50", "--global_batch=128", "--ici_fsdp_parallelism=64", "--ici_tensor_parallelism=4"],
            },
        }
    ],
)
job.run()

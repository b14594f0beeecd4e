# Vertex AI CustomJob through the Python SDK: v5litepod-32 (4x8), fsdp=8,tp=4, remat none, global batch 8 (planned by tpu-doctor for examples/configs/llama-3.1-8b.json)
from google.cloud import aiplatform

aiplatform.init(project="PROJECT_ID", location="us-central1", staging_bucket="gs://BUCKET")

job = aiplatform.CustomJob(
    display_name="tpu-doctor-train",
    worker_pool_specs=[
        {
            "machine_spec": { "machine_type": "ct5lp-hightpu-4t", "tpu_topology": "4x8" },
            # One replica: Vertex AI provisions every host of the TPU slice from the topology.
            "replica_count": 1,
            "container_spec": {
                "image_uri": "IMAGE_URI",
                "command": ["python3", "train.py"],
                "args": ["--per_device_batch=0.25", "--global_batch=8", "--ici_fsdp_parallelism=8", "--ici_tensor_parallelism=4"],
            },
        }
    ],
)
job.run()

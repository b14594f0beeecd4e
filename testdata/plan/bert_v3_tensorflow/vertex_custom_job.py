# Vertex AI CustomJob through the Python SDK: v3-8 (2x2), data=8, remat none, global batch 2048 (planned by tpu-doctor for examples/configs/bert-base-uncased.json)
from google.cloud import aiplatform

aiplatform.init(project="PROJECT_ID", location="us-central1", staging_bucket="gs://BUCKET")

job = aiplatform.CustomJob(
    display_name="tpu-doctor-train",
    worker_pool_specs=[
        {
            "machine_spec": { "machine_type": "cloud-tpu", "accelerator_type": "TPU_V3", "accelerator_count": 8 },
            # One replica: Vertex AI provisions every host of the TPU slice from the topology.
            "replica_count": 1,
            "container_spec": {
                "image_uri": "IMAGE_URI",
                "command": ["python3", "train.py"],
                "args": ["--per_device_batch=256", "--global_batch=2048"],
            },
        }
    ],
)
job.run()

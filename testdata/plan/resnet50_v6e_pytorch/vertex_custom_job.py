# Vertex AI CustomJob through the Python SDK: v6e-1 (1x1), data=1, remat none, global batch 256 (planned by tpu-doctor for examples/resnet50.onnx)
from google.cloud import aiplatform

aiplatform.init(project="PROJECT_ID", location="us-central1", staging_bucket="gs://BUCKET")

job = aiplatform.CustomJob(
    display_name="tpu-doctor-train",
    worker_pool_specs=[
        {
            "machine_spec": { "machine_type": "ct6e-standard-1t", "tpu_topology": "1x1" },
            # One replica: Vertex AI provisions every host of the TPU slice from the topology.
            "replica_count": 1,
            "container_spec": {
                "image_uri": "IMAGE_URI",
                "command": ["python3", "train.py"],
                "args": ["--per_device_batch=256", "--global_batch=256"],
            },
        }
    ],
)
job.run()

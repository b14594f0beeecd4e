from google.cloud import aiplatform

NUM_CHIPS = 4  # a v3-8 host has 4 chips, but Vertex AI counts its 8 cores

job = aiplatform.CustomContainerTrainingJob(display_name="dito",
                                            container_uri="us-docker.pkg.dev/my/train:latest")
job.run(replica_count=1, machine_type="cloud-tpu", accelerator_type="TPU_V3",
        accelerator_count=NUM_CHIPS)

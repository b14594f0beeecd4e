from google.cloud import aiplatform

# Model Garden's JAX notebooks: the slice's size is a constant set cells before the job runs.
NUM_CORES = 8
TRAIN_BATCH_SIZE = 8 * NUM_CORES

job = aiplatform.CustomContainerTrainingJob(display_name="dito",
                                            container_uri="us-docker.pkg.dev/my/train:latest")
job.run(replica_count=1, machine_type="cloud-tpu", accelerator_type="TPU_V3",
        accelerator_count=NUM_CORES)


def launch(cores):
    # A count the caller passes: the slice is not known here, so nothing is said of it.
    job.run(machine_type="cloud-tpu", accelerator_type="TPU_V3", accelerator_count=cores)

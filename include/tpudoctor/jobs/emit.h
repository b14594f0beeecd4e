// EmitJobFiles: the files that launch a plan's choice — a Vertex AI CustomJob spec (YAML for
// `gcloud ai custom-jobs create --config`) and the same job through the Python SDK, the gcloud
// commands that create the TPU VM directly or through queued resources, a GKE JobSet manifest
// with the TPU node selectors and `google.com/tpu` resources, and a training-script skeleton in
// the model's framework (JAX mesh + NamedSharding, torch_xla on PJRT, or TPUStrategy) with the
// plan's batch, parallelism and remat written in. Every accelerator string comes from the
// catalog (catalog.h), so `check --job` passes what is emitted.
#pragma once

#include <string>
#include <vector>

#include "tpudoctor/jobs/plan.h"

namespace tpudoctor {

struct EmitOptions {
  std::string framework;  // "jax", "pytorch", "tensorflow"; empty: the model's own (JAX if unknown)
  std::string job_name = "tpu-doctor-train";
  std::string zone;                     // empty: the catalog's first zone of the generation
  std::string image_uri = "IMAGE_URI";  // placeholders the user fills in
  std::string project = "PROJECT_ID";
  std::string bucket = "gs://BUCKET";
};

struct EmittedFile {
  std::string name;  // relative to the output folder
  std::string text;
};

Result<std::vector<EmittedFile>> EmitJobFiles(const Plan& plan, const PlanCandidate& choice,
                                              const EmitOptions& options);

}  // namespace tpudoctor

// Job checks (`tpu-doctor check --job FILE`): a Vertex AI CustomJob spec (YAML or JSON, the
// `--config` file or a whole CustomJob), a GKE manifest (JobSet, Job, Pod, any kind with a TPU
// node selector), or a launch script (Python or shell: gcloud commands, xmp.spawn, TPUStrategy,
// batch sizes, the Vertex AI Python SDK's machine_spec) is read into a JobSpec: the TPU it asks
// for and the training settings it names, each with where it was found. The JOB rules check the
// spec against the job catalog (catalog.h) and, when a model is given, against the model's
// memory on that slice. Rules are listed in one sorted registry (AllJobRules); each has
// docs/rules/JOBnnn.md and fixtures under testdata/rules/JOBnnn/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/diag/diagnostic.h"
#include "tpudoctor/frontend/source.h"
#include "tpudoctor/ir/graph.h"
#include "tpudoctor/jobs/catalog.h"

namespace tpudoctor {

struct JobSpec {
  std::string file;  // display name
  std::string kind;  // "vertex-custom-job", "gke-manifest", "launch-script"
  // The TPU requested, in whichever vocabulary the file uses.
  std::string accelerator_type;         // gcloud --accelerator-type (`v5litepod-16`)
  std::string vertex_machine_type;      // `ct5lp-hightpu-4t`, `cloud-tpu`
  std::string vertex_accelerator_type;  // `TPU_V3`
  std::optional<std::int64_t> vertex_accelerator_count;
  std::string topology;                          // Vertex tpuTopology or GKE gke-tpu-topology
  std::optional<std::int64_t> replica_count;     // of the TPU worker pool
  std::string gke_accelerator;                   // cloud.google.com/gke-tpu-accelerator
  std::optional<std::int64_t> gke_tpu_per_node;  // google.com/tpu
  std::optional<std::int64_t> gke_hosts;         // Job parallelism
  std::string zone;
  std::string region;
  std::string runtime_version;  // gcloud --version / --runtime-version
  // Training settings a script or the container args name.
  bool xmp_spawn = false;  // torch_xla's xmp.spawn starts the training
  std::optional<std::int64_t> xmp_nprocs;
  bool xrt_runtime = false;  // XRT_TPU_CONFIG: the pre-PJRT torch_xla runtime
  bool tpu_strategy = false;
  std::optional<std::int64_t> global_batch;
  std::optional<std::int64_t> per_device_batch;
  // A `--batch_size` / `--train_batch_size` flag of a file that does not say whose batch it is
  // (container args): global under TPUStrategy, Keras or MaxText, per device in torch_xla scripts.
  std::optional<std::int64_t> batch_size;
  int tensor_parallel = 1;  // chips that share each sample (--ici_tensor_parallelism)
  int fsdp_parallel = 1;    // chips that shard the parameters (--ici_fsdp_parallelism)
  std::string remat;        // --remat none|dots|layer|offload (tpu-doctor's training skeletons)
  bool batch_without_drop_remainder = false;  // a tf.data .batch() without drop_remainder=True
  // Where each setting was found: a key path (`workerPoolSpecs[0].machineSpec.acceleratorType`)
  // or `line N`, keyed by the field name above.
  std::map<std::string, std::string> where;

  // The slice the spec resolves to, when the TPU fields name one the catalog lists.
  const TpuGeneration* generation = nullptr;
  int chips = 0;
};

// Errors (exit 2): unreadable, not YAML/JSON/script text, nothing TPU- or training-related in it,
// too large or too deeply nested.
Result<JobSpec> ReadJobSpec(const Source& source);

// Sets `generation` and `chips` from the TPU fields of a spec built by other means (the Python
// script checker reads a Vertex AI SDK call), as ReadJobSpec does.
void ResolveJobSlice(JobSpec& spec);

struct JobContext {
  const JobSpec& spec;
  const Graph* model = nullptr;  // the model the job trains, when given
  bool train = true;
  Optimizer optimizer = Optimizer::kAdam;
  Precision precision = Precision::kBf16;
};

class JobRule {
 public:
  virtual ~JobRule() = default;
  virtual std::string_view code() const = 0;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  virtual void Run(const JobContext& context, DiagnosticSink& sink) const = 0;
};

// Every JOB rule, sorted by code.
const std::vector<std::unique_ptr<JobRule>>& AllJobRules();
std::vector<Diagnostic> CheckJob(const JobContext& context);

// The per-device batch the job's model is judged at, and where it came from, in words: the
// caller's (--batch), the job's per-device batch, its global batch over the slice's data replicas,
// or its `batch_size` flag read by the framework's convention; none when the job names no batch
// (the model's own shapes are used).
struct JobModelBatch {
  std::optional<std::int64_t> per_device;
  std::string from;  // "the job's per-device batch (workerPoolSpecs[0].containerSpec.args[0])"
};
JobModelBatch ModelBatchOf(const JobSpec& spec, std::optional<std::int64_t> given);

// The model `check --job` judges against the job's slice.
struct JobModel {
  std::string path;
  JobModelBatch batch;
};

// `check --job` output: what the spec asks for, the model and its batch, the verdict, the findings.
std::string RenderJobText(const JobSpec& spec, const JobModel* model,
                          const std::vector<Diagnostic>& findings);
std::string RenderJobJson(const JobSpec& spec, const JobModel* model,
                          const std::vector<Diagnostic>& findings);

}  // namespace tpudoctor

#include "src/jobs/rules/job_rules.h"

namespace tpudoctor {
namespace {

// Vertex AI provisions all hosts of a TPU slice from the machine type and topology: the TPU worker
// pool has one replica. More replicas ask for several independent slices that do not form one job.
class Job004 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB004", "tpu-replica-count",
                "a Vertex AI TPU worker pool with more than one replica")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    if (!s.replica_count || *s.replica_count <= 1) return;
    if (s.vertex_machine_type.empty() && s.vertex_accelerator_type.empty()) return;
    sink.Add(JobFinding(
        c, code(), Severity::kError,
        "the TPU worker pool has `replicaCount: " + std::to_string(*s.replica_count) +
            "`; Vertex AI runs a TPU slice as one replica and provisions its hosts from the "
            "topology",
        "replica_count", "set replicaCount to 1 and pick a larger tpuTopology for more chips"));
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob004TpuReplicaCount() { return std::make_unique<Job004>(); }

}  // namespace tpudoctor

#include "src/jobs/rules/job_rules.h"

namespace tpudoctor {
namespace {

// Under TPUStrategy every step must have the shape XLA compiled; a tf.data batch without
// drop_remainder=True has an unknown batch dim and a smaller last batch (PIPE004 says the same of
// a pipeline graph).
class Job010 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB010", "no-drop-remainder",
                "a TPUStrategy script batches without drop_remainder=True")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    if (!s.tpu_strategy || !s.batch_without_drop_remainder) return;
    sink.Add(JobFinding(c, code(), Severity::kWarning,
                        "`.batch()` without `drop_remainder=True` in a TPUStrategy script: the "
                        "batch dim is unknown to XLA and the last batch is smaller",
                        "batch_without_drop_remainder",
                        "write `.batch(global_batch, drop_remainder=True)`"));
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob010DropRemainder() { return std::make_unique<Job010>(); }

}  // namespace tpudoctor

#include "src/jobs/rules/job_rules.h"

namespace tpudoctor {
namespace {

// A judgement (Cloud TPU performance guide): the per-core batch is the second-minor dim of most
// activations, which TPU memory tiles in eights; a batch that is not a multiple of 8 pads every
// activation and leaves MXU rows idle. Sequence models whose per-core batch is a few sequences are
// exempt: their matmul rows are batch x sequence tokens.
class Job007 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB007", "per-core-batch", "the per-core batch is not a multiple of 8")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    std::optional<std::int64_t> per = s.per_device_batch;
    std::string field = "per_device_batch";
    const int replicas = Replicas(s);
    if (!per && s.global_batch && replicas > 0 && *s.global_batch % replicas == 0) {
      per = *s.global_batch / replicas;
      field = "global_batch";
    }
    if (!per || *per % 8 == 0) return;
    if (c.model != nullptr && c.model->facts().format.ends_with("-config")) return;
    sink.Add(JobFinding(c, code(), Severity::kWarning,
                        "the per-core batch is " + std::to_string(*per) +
                            "; TPU memory tiles the batch dim in multiples of 8, so " +
                            std::to_string(*per) + " pads to " + std::to_string((*per + 7) / 8 * 8),
                        field,
                        "use a per-core batch that is a multiple of 8 (ideally of 128 for wide "
                        "matmuls)"));
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob007PerCoreBatch() { return std::make_unique<Job007>(); }

}  // namespace tpudoctor

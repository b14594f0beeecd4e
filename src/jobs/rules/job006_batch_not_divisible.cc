#include "src/jobs/rules/job_rules.h"

namespace tpudoctor {
namespace {

// Data parallelism splits the global batch evenly over the replicas (TPUStrategy, pmap/pjit
// sharding, torch_xla's one process per device); a global batch that does not divide cannot be
// split into equal static shapes, and global != per-device x replicas means one of them is wrong.
class Job006 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB006", "batch-not-divisible",
                "the global batch does not split evenly over the slice's replicas")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    const int replicas = Replicas(s);
    if (replicas == 0 || !s.global_batch) return;
    if (*s.global_batch % replicas != 0) {
      sink.Add(JobFinding(c, code(), Severity::kError,
                          "global batch " + std::to_string(*s.global_batch) +
                              " does not divide over the " + std::to_string(replicas) +
                              " replicas of " + SliceName(s),
                          "global_batch",
                          "use a multiple of " + std::to_string(replicas) + " (e.g. " +
                              std::to_string((*s.global_batch / replicas + 1) * replicas) + ")"));
    } else if (s.per_device_batch && *s.per_device_batch * replicas != *s.global_batch) {
      sink.Add(
          JobFinding(c, code(), Severity::kError,
                     "global batch " + std::to_string(*s.global_batch) +
                         " is not the per-device batch " + std::to_string(*s.per_device_batch) +
                         " x " + std::to_string(replicas) + " replicas of " + SliceName(s),
                     "global_batch",
                     "set the global batch to " + std::to_string(*s.per_device_batch * replicas)));
    }
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob006BatchNotDivisible() { return std::make_unique<Job006>(); }

}  // namespace tpudoctor

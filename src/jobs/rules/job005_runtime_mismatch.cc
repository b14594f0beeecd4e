#include "src/jobs/rules/job_rules.h"

namespace tpudoctor {
namespace {

// The runtime (software) version of another TPU generation: the TPU VM image does not have the
// drivers and libtpu for this one, so creation fails or the framework finds no TPU.
class Job005 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB005", "runtime-mismatch",
                "the TPU runtime version belongs to another TPU generation")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    if (s.generation == nullptr || s.runtime_version.empty()) return;
    const std::string& rt = s.runtime_version;
    if (rt == s.generation->runtime || rt == s.generation->tf_runtime ||
        rt.starts_with("tpu-vm-tf-"))
      return;
    for (const TpuGeneration& other : TpuCatalog()) {
      if (other.runtime != rt || other.runtime == s.generation->runtime) continue;
      sink.Add(JobFinding(c, code(), Severity::kError,
                          "runtime version `" + rt + "` is " + other.target +
                              "'s, but the slice is " + SliceName(s) + " (" + s.generation->target +
                              ")",
                          "runtime_version",
                          "use --version=" + s.generation->runtime + " for PyTorch/JAX on " +
                              s.generation->target));
      return;
    }
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob005RuntimeMismatch() { return std::make_unique<Job005>(); }

}  // namespace tpudoctor

#include "src/jobs/rules/job_rules.h"

namespace tpudoctor {
namespace {

// torch_xla's PJRT runtime (the only one since torch_xla 2.1) starts one process per device
// itself: xmp.spawn accepts nprocs=None (all devices) or 1, and raises "Unsupported nprocs" for
// anything else. nprocs=8 is the XRT-era idiom for a v2-8/v3-8.
class Job009 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB009", "xmp-spawn-nprocs",
                "xmp.spawn(nprocs=N) with N > 1 on torch_xla's PJRT runtime")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    if (!s.xmp_nprocs || *s.xmp_nprocs <= 1 || s.xrt_runtime) return;
    sink.Add(JobFinding(c, code(), Severity::kError,
                        "`xmp.spawn(..., nprocs=" + std::to_string(*s.xmp_nprocs) +
                            ")`: torch_xla's PJRT runtime takes nprocs=None (one process per "
                            "device) or 1, and raises `Unsupported nprocs` for " +
                            std::to_string(*s.xmp_nprocs),
                        "xmp_nprocs",
                        "drop nprocs (xmp.spawn(fn, args=())); limit devices with TPU_NUM_DEVICES "
                        "if you must"));
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob009XmpSpawnNprocs() { return std::make_unique<Job009>(); }

}  // namespace tpudoctor

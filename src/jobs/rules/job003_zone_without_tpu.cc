#include <algorithm>

#include "src/jobs/rules/job_rules.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// A judgement on a list that changes: the zone is not among those Cloud TPU documented for the
// generation when the catalog was written (a warning, not an error).
class Job003 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB003", "zone-without-tpu", "the zone is not one that offers this TPU generation")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    if (s.generation == nullptr || s.zone.empty()) return;
    const auto& zones = s.generation->zones;
    if (std::find(zones.begin(), zones.end(), s.zone) != zones.end()) return;
    std::vector<std::string> quoted;
    for (const std::string& z : zones) quoted.push_back("`" + z + "`");
    sink.Add(JobFinding(c, code(), Severity::kWarning,
                        "zone `" + s.zone + "` is not among the zones with " +
                            s.generation->target + " (Cloud TPU's list as of " + CatalogDate() +
                            ": " + Join(quoted, ", ") + ")",
                        "zone", "create the TPU in one of those zones, or check the current list"));
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob003ZoneWithoutTpu() { return std::make_unique<Job003>(); }

}  // namespace tpudoctor

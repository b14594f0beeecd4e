#include "src/jobs/rules/job_rules.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// The accelerator the spec names exists nowhere in the catalog: GCE accelerator types
// (`v5litepod-16`), Vertex AI TPU enums and machine types, GKE TPU accelerator labels.
class Job001 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB001", "unknown-accelerator",
                "the TPU type, machine type or GKE label is not one Cloud TPU offers")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    if (!s.accelerator_type.empty() && !ParseAcceleratorType(s.accelerator_type)) {
      sink.Add(JobFinding(c, code(), Severity::kError,
                          "accelerator type `" + s.accelerator_type +
                              "` is not a Cloud TPU slice; expected " + Sizes(s.accelerator_type),
                          "accelerator_type",
                          "use an accelerator type of the form `v5litepod-16`, `v5p-128`, "
                          "`v6e-8` (`tpu-doctor plan` emits valid ones)"));
    }
    if (s.vertex_accelerator_type.starts_with("TPU_") && !KnownEnum(s.vertex_accelerator_type)) {
      sink.Add(JobFinding(c, code(), Severity::kError,
                          "Vertex AI has no accelerator type `" + s.vertex_accelerator_type +
                              "`; its TPU values are " + Enums(),
                          "vertex_accelerator_type", "use one of " + Enums()));
    }
    if (!s.vertex_machine_type.empty() && s.generation == nullptr &&
        (s.vertex_machine_type.starts_with("ct") || s.vertex_machine_type == "cloud-tpu") &&
        s.vertex_accelerator_type.empty()) {
      sink.Add(JobFinding(
          c, code(), Severity::kError,
          "machine type `" + s.vertex_machine_type + "` is not a TPU machine type of Vertex AI",
          "vertex_machine_type",
          "use ct5lp-hightpu-4t (v5e), ct6e-standard-4t (v6e), ct5p-hightpu-4t "
          "(v5p), ct4p-hightpu-4t (v4), or cloud-tpu with TPU_V2/TPU_V3"));
    }
    if (!s.gke_accelerator.empty() && s.generation == nullptr) {
      sink.Add(JobFinding(
          c, code(), Severity::kError,
          "GKE has no TPU accelerator `" + s.gke_accelerator + "`; expected one of " + GkeLabels(),
          "gke_accelerator", "use one of " + GkeLabels()));
    }
  }

 private:
  static bool KnownEnum(const std::string& e) {
    for (const TpuGeneration& g : TpuCatalog()) {
      if (!g.vertex_accelerator_type.empty() && g.vertex_accelerator_type == e) return true;
    }
    return false;
  }
  static std::string Enums() {
    std::vector<std::string> out;
    for (const TpuGeneration& g : TpuCatalog()) {
      if (!g.vertex_accelerator_type.empty()) out.push_back("`" + g.vertex_accelerator_type + "`");
    }
    return Join(out, ", ");
  }
  static std::string GkeLabels() {
    std::vector<std::string> out;
    for (const TpuGeneration& g : TpuCatalog()) {
      if (!g.gke_accelerator.empty()) out.push_back("`" + g.gke_accelerator + "`");
    }
    return Join(out, ", ");
  }
  // The valid sizes of the generation the prefix names, or the valid prefixes.
  static std::string Sizes(const std::string& name) {
    const std::string prefix = name.substr(0, name.rfind('-'));
    for (const TpuGeneration& g : TpuCatalog()) {
      if (g.name_prefix != prefix) continue;
      std::vector<std::string> out;
      for (const TpuSlice& sl : g.slices) out.push_back(g.AcceleratorType(sl.chips));
      return "one of " + Join(out, ", ");
    }
    std::vector<std::string> prefixes;
    for (const TpuGeneration& g : TpuCatalog()) prefixes.push_back(g.name_prefix + "-N");
    return "a name of the form " + Join(prefixes, ", ");
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob001UnknownAccelerator() { return std::make_unique<Job001>(); }

}  // namespace tpudoctor

#include <algorithm>

#include "src/jobs/rules/job_rules.h"

namespace tpudoctor {
namespace {

// The parts of a TPU request must agree: Vertex AI takes v2/v3 as `cloud-tpu` with
// TPU_V2/TPU_V3 and acceleratorCount 8, and every later generation as a `ct*` machine type with a
// tpuTopology (no accelerator count); the topology must be a slice of the generation, the machine
// type must hold that many chips per VM; on GKE, google.com/tpu is the chips of one node and the
// Job runs one pod per host.
// `machineType: ct5lp-hightpu-4t` with `tpuTopology: "4x4"`: a consistent example (16 chips).
std::string Suggestion(const TpuGeneration& g) {
  const TpuSlice* example = g.SliceWithChips(16);
  if (example == nullptr) example = &g.slices.back();
  return "set `machineType: " + g.VertexMachineType(example->chips) + "` with `tpuTopology: \"" +
         example->topology + "\"` (" + std::to_string(example->chips) +
         " chips; any topology of the generation), and drop acceleratorType/acceleratorCount";
}

class Job002 final : public JobRule {
 public:
  TPUD_JOB_RULE("JOB002", "slice-shape",
                "accelerator type, count, machine type and topology do not describe one slice")
  void Run(const JobContext& c, DiagnosticSink& sink) const override {
    const JobSpec& s = c.spec;
    if (s.generation == nullptr) return;
    const TpuGeneration& g = *s.generation;
    auto add = [&](std::string msg, const char* field, std::string fix) {
      sink.Add(JobFinding(c, code(), Severity::kError, std::move(msg), field, std::move(fix)));
    };
    const bool counted = !g.vertex_accelerator_counts.empty();  // v2/v3
    if (s.kind == "vertex-custom-job" || !s.vertex_accelerator_type.empty()) {
      if (!counted && s.vertex_accelerator_count) {
        add("Vertex AI does not take " + g.target + " as `acceleratorType: " +
                (s.vertex_accelerator_type.empty() ? g.vertex_accelerator_type
                                                   : s.vertex_accelerator_type) +
                "` with `acceleratorCount: " + std::to_string(*s.vertex_accelerator_count) +
                "`; it takes a machine type with a TPU topology",
            "vertex_accelerator_count", Suggestion(g));
        return;
      }
      if (counted) {
        const bool ok_count =
            s.vertex_accelerator_count &&
            std::find(g.vertex_accelerator_counts.begin(), g.vertex_accelerator_counts.end(),
                      *s.vertex_accelerator_count) != g.vertex_accelerator_counts.end();
        if (!ok_count) {
          add("`" + g.vertex_accelerator_type + "` on Vertex AI needs `acceleratorCount: " +
                  std::to_string(g.vertex_accelerator_counts.front()) + "` (one " +
                  g.AcceleratorType(g.vertex_accelerator_counts.front() / 2) + " host), not " +
                  (s.vertex_accelerator_count ? std::to_string(*s.vertex_accelerator_count)
                                              : std::string("none")),
              "vertex_accelerator_count",
              "set acceleratorCount to " + std::to_string(g.vertex_accelerator_counts.front()));
        }
        if (!s.vertex_machine_type.empty() && s.vertex_machine_type != g.vertex_machine_type) {
          add("`" + g.vertex_accelerator_type + "` runs on machine type `" + g.vertex_machine_type +
                  "`, not `" + s.vertex_machine_type + "`",
              "vertex_machine_type", "set machineType to " + g.vertex_machine_type);
        }
        return;
      }
      if (s.topology.empty()) {
        add("a " + g.target + " worker pool needs `tpuTopology` (the slice shape)",
            "vertex_machine_type", "add tpuTopology, e.g. `" + g.slices.back().topology + "`");
        return;
      }
    }
    if (!s.topology.empty() && g.SliceWithTopology(s.topology) == nullptr) {
      add("topology `" + s.topology + "` is not a " + g.target + " slice", "topology",
          "use one of the catalog's topologies (`tpu-doctor plan` emits one)");
      return;
    }
    if (s.chips == 0) return;
    if (!s.vertex_machine_type.empty() && !counted) {
      const std::string want = g.VertexMachineType(s.chips);
      if (!want.empty() && want != s.vertex_machine_type) {
        add("topology `" + s.topology + "` (" + std::to_string(s.chips) + " chips, " +
                std::to_string(g.Hosts(s.chips)) + " host(s)) runs on machine type `" + want +
                "`, not `" + s.vertex_machine_type + "`",
            "vertex_machine_type", "set machineType to " + want);
      }
    }
    if (!s.gke_accelerator.empty()) {
      const int hosts = g.Hosts(s.chips);
      const int per_node = s.chips / hosts;
      if (s.gke_tpu_per_node && *s.gke_tpu_per_node != per_node) {
        add("`google.com/tpu: " + std::to_string(*s.gke_tpu_per_node) + "` but a " + s.topology +
                " " + g.gke_accelerator + " node has " + std::to_string(per_node) + " chips",
            "gke_tpu_per_node", "request google.com/tpu: " + std::to_string(per_node));
      }
      if (s.gke_hosts && *s.gke_hosts != hosts) {
        add("the Job runs " + std::to_string(*s.gke_hosts) + " pods but a " + s.topology +
                " slice has " + std::to_string(hosts) + " hosts (one pod each)",
            "gke_hosts", "set parallelism and completions to " + std::to_string(hosts));
      }
    }
  }
};

}  // namespace

std::unique_ptr<JobRule> MakeJob002SliceShape() { return std::make_unique<Job002>(); }

}  // namespace tpudoctor

#include "tpudoctor/jobs/job.h"

#include <nlohmann/json.hpp>

#include "tpudoctor/report/report.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

using nlohmann::ordered_json;

std::string What(const JobSpec& s) {
  std::string out = s.kind;
  if (s.generation && s.chips) {
    out += ": " + s.generation->AcceleratorType(s.chips) + " (" + s.generation->target + ", " +
           std::to_string(s.chips) + " chips)";
  } else if (!s.accelerator_type.empty() || !s.vertex_accelerator_type.empty() ||
             !s.vertex_machine_type.empty() || !s.gke_accelerator.empty()) {
    std::vector<std::string> parts;
    for (const std::string* p : {&s.accelerator_type, &s.vertex_machine_type,
                                 &s.vertex_accelerator_type, &s.gke_accelerator}) {
      if (!p->empty()) parts.push_back(*p);
    }
    out += ": " + Join(parts, " ");
  }
  return out;
}

int Count(const std::vector<Diagnostic>& f, Severity s) {
  return static_cast<int>(
      std::count_if(f.begin(), f.end(), [&](const Diagnostic& d) { return d.severity == s; }));
}

// `PATH at batch 8 per device (the job's per-device batch at line 3)`.
std::string ModelLine(const JobModel& m) {
  if (!m.batch.per_device) return m.path + " at its own shapes (" + m.batch.from + ")";
  return m.path + " at batch " + std::to_string(*m.batch.per_device) + " per device (" +
         m.batch.from + ")";
}

}  // namespace

std::string RenderJobText(const JobSpec& spec, const JobModel* model,
                          const std::vector<Diagnostic>& findings) {
  const int errors = Count(findings, Severity::kError);
  const int warnings = Count(findings, Severity::kWarning);
  std::string out = "tpu-doctor " + std::string(kToolVersion) + ": job " + spec.file + " (" +
                    What(spec) + ")\n" + (model ? "model: " + ModelLine(*model) + "\n" : "") +
                    "\nverdict: " + AsciiUpper(NameOf(VerdictOf(errors, warnings))) + " (" +
                    std::to_string(errors) + " error" + (errors == 1 ? "" : "s") + ", " +
                    std::to_string(warnings) + " warning" + (warnings == 1 ? "" : "s") + ")\n";
  for (const Diagnostic& d : findings) {
    out += "\n" + std::string(NameOf(d.severity)) + "[" + d.code + "]: " + d.message + "\n";
    out += "  --> " + spec.file + (d.location.node.empty() ? "" : " " + d.location.node) + "\n";
    for (const std::string& n : d.notes) out += "  = note: " + n + "\n";
    if (d.fix) out += "  = fix: " + d.fix->description + "\n";
  }
  return out;
}

std::string RenderJobJson(const JobSpec& spec, const JobModel* model,
                          const std::vector<Diagnostic>& findings) {
  ordered_json j;
  j["schema_version"] = 1;
  j["job"] = spec.file;
  j["kind"] = spec.kind;
  j["generation"] = spec.generation ? ordered_json(spec.generation->target) : ordered_json();
  j["accelerator_type"] = spec.generation && spec.chips
                              ? ordered_json(spec.generation->AcceleratorType(spec.chips))
                              : ordered_json();
  j["chips"] = spec.chips;
  if (model) {
    j["model"] = {
        {"path", model->path},
        {"batch_per_device",
         model->batch.per_device ? ordered_json(*model->batch.per_device) : ordered_json()},
        {"batch_from", model->batch.from}};
  }
  const int errors = Count(findings, Severity::kError);
  const int warnings = Count(findings, Severity::kWarning);
  j["verdict"] = std::string(NameOf(VerdictOf(errors, warnings)));
  j["summary"] = {
      {"errors", errors}, {"warnings", warnings}, {"notes", Count(findings, Severity::kNote)}};
  ordered_json list = ordered_json::array();
  for (const Diagnostic& d : findings) {
    list.push_back({{"code", d.code},
                    {"severity", std::string(NameOf(d.severity))},
                    {"message", d.message},
                    {"where", d.location.node},
                    {"fix", d.fix ? ordered_json(d.fix->description) : ordered_json()}});
  }
  j["findings"] = list;
  return j.dump(2) + "\n";
}

}  // namespace tpudoctor

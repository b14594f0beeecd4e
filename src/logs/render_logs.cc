#include <nlohmann/json.hpp>

#include "tpudoctor/logs/logs.h"
#include "tpudoctor/support/strings.h"
#include "tpudoctor/support/version.h"

namespace tpudoctor {
namespace {

std::string Size(std::int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (bytes < 1024 * 1024) return FormatFixed(static_cast<double>(bytes) / 1024, 1) + " KiB";
  if (bytes < std::int64_t{1} << 30)
    return FormatFixed(static_cast<double>(bytes) / (1024 * 1024), 1) + " MiB";
  return FormatFixed(static_cast<double>(bytes) / (1 << 30), 2) + " GiB";
}

std::string Extracted(const LogCause& c) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : c.extracted) parts.push_back(k + "=" + SanitizeText(v));
  return Join(parts, ", ");
}

std::string Header(const LogDiagnosis& d) {
  std::string out = "tpu-doctor " + std::string(kToolVersion) + ": logs " + Join(d.files, ", ") +
                    " (" + Plural(d.lines, "line", "lines") + ", " + Size(d.bytes) + ")";
  if (!d.framework.empty()) out += "; framework: " + d.framework;
  for (const auto& [k, v] : d.versions) out += "; " + k + " " + SanitizeText(v);
  out += "\n";
  for (const std::string& note : d.notes) out += "note: " + SanitizeText(note) + "\n";
  return out + "\n";
}

}  // namespace

std::string RenderLogsText(const LogDiagnosis& d) {
  std::string out = Header(d);
  if (d.causes.empty()) {
    return out +
           "no failure found: no known failure signature, and nothing in the log shows that the "
           "run failed (no traceback or exception, status code, failed check, fatal signal or "
           "non-zero exit)\n";
  }
  for (std::size_t i = 0; i < d.causes.size(); ++i) {
    const LogCause& c = d.causes[i];
    const std::string decided = c.layer == "fallback" ? ", by the scored fallback: confidence " +
                                                            FormatFixed(c.confidence, 2) +
                                                            "; no exact signature matched"
                                                      : "";
    if (i == 0) {
      out += "root cause: " + c.title + " [" + c.category + decided + "]\n";
    } else {
      if (i == 1) out += "\nalso found:\n";
      out += std::to_string(i + 1) + ". " + std::string(NameOf(c.severity)) + ": " + c.title +
             " [" + c.category + decided + "]" +
             (c.knock_on ? " (likely a knock-on of the root cause)" : "") + "\n";
    }
    for (const Evidence& e : c.evidence) {
      out += "  " + e.file + ":" + std::to_string(e.line) + ": " + SanitizeText(e.text) + "\n";
    }
    if (c.count > static_cast<std::int64_t>(c.evidence.size())) {
      out += "  (" + std::to_string(c.count) + " matching lines in all)\n";
    }
    if (!c.extracted.empty()) out += "  = extracted: " + Extracted(c) + "\n";
    if (i == 0 || !c.knock_on) {
      if (!c.explanation.empty()) out += "  = why: " + c.explanation + "\n";
      if (!c.fix.empty()) out += "  = fix: " + c.fix + "\n";
    }
  }
  return out;
}

std::string RenderLogsJson(const LogDiagnosis& d) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schema_version"] = kLogsSchemaVersion;
  j["tool"] = {{"name", "tpu-doctor"}, {"version", kToolVersion}};
  j["inputs"] = {{"files", d.files}, {"lines", d.lines}, {"bytes", d.bytes}};
  if (!d.notes.empty()) j["inputs"]["notes"] = d.notes;
  j["framework"] = d.framework;
  ordered_json versions = ordered_json::object();
  for (const auto& [k, v] : d.versions) versions[k] = SanitizeText(v);
  j["versions"] = versions;
  ordered_json causes = ordered_json::array();
  for (const LogCause& c : d.causes) {
    ordered_json cause;
    cause["category"] = c.category;
    cause["severity"] = std::string(NameOf(c.severity));
    cause["title"] = c.title;
    cause["signature"] = c.signature;
    cause["layer"] = c.layer;
    cause["confidence"] = c.confidence;
    cause["count"] = c.count;
    cause["knock_on"] = c.knock_on;
    ordered_json evidence = ordered_json::array();
    for (const Evidence& e : c.evidence) {
      evidence.push_back({{"file", e.file}, {"line", e.line}, {"text", SanitizeText(e.text)}});
    }
    cause["evidence"] = evidence;
    ordered_json extracted = ordered_json::object();
    for (const auto& [k, v] : c.extracted) extracted[k] = SanitizeText(v);
    cause["extracted"] = extracted;
    cause["explanation"] = c.explanation;
    cause["fix"] = c.fix;
    causes.push_back(cause);
  }
  j["causes"] = causes;
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace tpudoctor

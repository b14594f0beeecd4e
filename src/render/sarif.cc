// SARIF 2.1.0 (OASIS) for code-scanning tools such as GitHub's: one run per invocation (GitHub
// takes at most 20 runs a file, and one run per tool and category), with the tool's rules and
// their help text, one artifact per model or script checked, one result per finding, and
// `automationDetails.id` naming the analysis. Paths are relative to the repository root
// (%SRCROOT%) as the user gave them; a node path is a logical location; a finding's fingerprint
// hashes its rule and node path (a script's: rule, message and line), so it survives unrelated
// edits.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "tpudoctor/report/render.h"
#include "tpudoctor/rules/rules.h"

namespace tpudoctor {
namespace {

using nlohmann::ordered_json;

constexpr const char* kSarifSchema = "https://json.schemastore.org/sarif-2.1.0.json";
// GitHub code scanning's limit on results in one run; beyond it the upload is rejected.
constexpr std::size_t kMaxResults = 25000;
// The analysis, as GitHub's category: its runs replace the previous ones of the same id.
constexpr const char* kAutomationId = "tpu-doctor/check/";

std::string_view LevelOf(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "note";
}

// FNV-1a, 64-bit: stable across runs and platforms (std::hash is neither).
std::string Fingerprint(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = kHex[h & 0xf];
  return out;
}

// A relative path stays relative to the repository root; an absolute one becomes a file: URI.
ordered_json ArtifactLocation(const std::string& path) {
  ordered_json a;
  if (!path.empty() && path[0] == '/') {
    a["uri"] = "file://" + path;
  } else {
    a["uri"] = path.starts_with("./") ? path.substr(2) : path;
    a["uriBaseId"] = "%SRCROOT%";
  }
  return a;
}

// Severity of a rule when nothing else is known: its worst finding in these reports, else warning.
std::string_view DefaultLevel(std::string_view code, std::span<const Report> reports) {
  std::optional<Severity> worst;
  for (const Report& r : reports) {
    for (const Diagnostic& d : r.findings) {
      if (d.code == code && (!worst || d.severity > *worst)) worst = d.severity;
    }
  }
  return LevelOf(worst.value_or(Severity::kWarning));
}

// Whether a report's rules include `info`: a model's, the model and load rules; a script's, those
// checked in scripts.
bool Lists(const Report& r, const RuleInfo& info) {
  return r.script ? info.in_scripts || info.kind == RuleKind::kLoad
                  : info.kind == RuleKind::kModel || info.kind == RuleKind::kLoad;
}

ordered_json Rules(std::span<const Report> reports, std::map<std::string, int>& index) {
  ordered_json rules = ordered_json::array();
  for (const RuleInfo& info : AllRules()) {
    const bool listed = std::any_of(reports.begin(), reports.end(),
                                    [&](const Report& r) { return Lists(r, info); });
    if (!listed) continue;
    const std::string& code = info.code;
    index[code] = static_cast<int>(rules.size());
    const std::string doc(RuleDoc(code).value_or(""));
    ordered_json rule;
    rule["id"] = code;
    rule["name"] = info.name;
    rule["shortDescription"] = {{"text", info.summary}};
    rule["fullDescription"] = {{"text", info.summary}};
    rule["help"] = {{"text", doc}, {"markdown", doc}};
    rule["defaultConfiguration"] = {{"level", std::string(DefaultLevel(code, reports))}};
    rules.push_back(rule);
  }
  return rules;
}

std::string LogicalName(const Location& loc) {
  std::string name = loc.graph;
  if (!loc.node.empty())
    name += (name.empty() ? "" : "/") + loc.node;
  else if (!loc.value.empty())
    name += (name.empty() ? "" : "/") + loc.value;
  return name;
}

ordered_json ResultOf(const Diagnostic& d, const Report& r, std::size_t artifact,
                      const std::map<std::string, int>& index) {
  ordered_json res;
  res["ruleId"] = d.code;
  if (auto it = index.find(d.code); it != index.end()) res["ruleIndex"] = it->second;
  res["level"] = std::string(LevelOf(d.severity));
  std::string text = d.message;
  for (const std::string& note : d.notes) text += "\n" + note;
  if (d.fix) text += "\nfix: " + d.fix->description;
  res["message"] = {{"text", text}};
  ordered_json loc;
  ordered_json physical;
  physical["artifactLocation"] = ArtifactLocation(r.model);
  physical["artifactLocation"]["index"] = artifact;
  physical["region"] = {{"startLine", 1}};
  if (r.script) {
    // A script's finding is at its line and column in the script itself.
    physical["region"] = {{"startLine", std::max(1, d.location.line)}};
    if (d.location.column > 0) physical["region"]["startColumn"] = d.location.column;
  }
  loc["physicalLocation"] = physical;
  const std::string logical = LogicalName(d.location);
  if (!logical.empty()) {
    ordered_json l = {{"fullyQualifiedName", logical}, {"kind", "function"}};
    l["name"] = d.location.node.empty() ? d.location.value : d.location.node;
    loc["logicalLocations"] = ordered_json::array({l});
  }
  res["locations"] = ordered_json::array({loc});
  if (r.script) {
    res["partialFingerprints"] = {
        {"tpuDoctorSource/v1",
         Fingerprint(d.code + "|" + d.message + "|" + std::to_string(d.location.cell) + ":" +
                     std::to_string(d.location.line))}};
    return res;
  }
  if (!d.location.file.empty()) {
    ordered_json related;
    related["id"] = 1;
    related["physicalLocation"]["artifactLocation"] = ArtifactLocation(d.location.file);
    related["physicalLocation"]["region"] = {{"startLine", std::max(1, d.location.line)}};
    related["message"] = {{"text", "the model code that produced this op"}};
    res["relatedLocations"] = ordered_json::array({related});
  }
  res["partialFingerprints"] = {
      {"tpuDoctorNode/v1",
       Fingerprint(d.code + "|" + logical + "|" + d.location.value + "|" + d.location.op)}};
  if (!d.location.scope.empty()) res["properties"] = {{"layer", d.location.scope}};
  return res;
}

ordered_json ArtifactOf(const Report& r) {
  ordered_json artifact;
  artifact["location"] = ArtifactLocation(r.model);
  artifact["sourceLanguage"] = r.script ? "python" : r.format;
  artifact["properties"] = {
      {"verdict", std::string(NameOf(r.verdict))}, {"target", r.target}, {"format", r.format}};
  return artifact;
}

ordered_json RunOf(std::span<const Report> reports) {
  std::map<std::string, int> index;
  ordered_json driver;
  driver["name"] = "tpu-doctor";
  driver["version"] = kToolVersion;
  driver["semanticVersion"] = kToolVersion;
  driver["rules"] = Rules(reports, index);
  ordered_json run;
  run["tool"] = {{"driver", driver}};
  run["automationDetails"] = {{"id", kAutomationId}};
  run["originalUriBaseIds"] = {{"%SRCROOT%", {{"description", {{"text", "the repository root"}}}}}};
  ordered_json artifacts = ordered_json::array();
  ordered_json results = ordered_json::array();
  std::size_t findings = 0;
  std::map<std::string, int> verdicts;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const Report& r = reports[i];
    artifacts.push_back(ArtifactOf(r));
    ++verdicts[std::string(NameOf(r.verdict))];
    for (const Diagnostic& d : r.findings) {
      ++findings;
      if (results.size() < kMaxResults) results.push_back(ResultOf(d, r, i, index));
    }
  }
  run["artifacts"] = std::move(artifacts);
  run["results"] = std::move(results);
  run["properties"] = {{"verdicts", verdicts}};
  if (findings > kMaxResults) {
    run["properties"]["resultsOmitted"] = findings - kMaxResults;
  }
  return run;
}

}  // namespace

std::string RenderSarif(const Report& r) { return RenderSarifAll(std::span<const Report>(&r, 1)); }

std::string RenderSarifAll(std::span<const Report> reports) {
  ordered_json runs = ordered_json::array({RunOf(reports)});
  ordered_json log;
  log["$schema"] = kSarifSchema;
  log["version"] = "2.1.0";
  log["runs"] = std::move(runs);
  return log.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace tpudoctor

#include "tpudoctor/diag/diagnostic.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tpudoctor {

std::string_view NameOf(Severity severity) {
  switch (severity) {
    case Severity::kNote:
      return "note";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "note";
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  if (name == "note") return Severity::kNote;
  if (name == "warning") return Severity::kWarning;
  if (name == "error") return Severity::kError;
  return std::nullopt;
}

std::string_view NameOf(FixApplicability applicability) {
  switch (applicability) {
    case FixApplicability::kSafe:
      return "safe";
    case FixApplicability::kUnsafe:
      return "unsafe";
    case FixApplicability::kDisplayOnly:
      return "display-only";
  }
  return "display-only";
}

namespace {

constexpr std::size_t kNamedRepeats = 3;

std::string Place(const Location& loc) {
  if (!loc.node.empty()) return "node `" + loc.node + "`";
  if (!loc.value.empty()) return "value `" + loc.value + "`";
  if (!loc.scope.empty()) return "layer `" + loc.scope + "`";
  return loc.graph;
}

}  // namespace

void GroupRepeatedFindings(std::vector<Diagnostic>& diagnostics) {
  using Key = std::tuple<std::string, Severity, std::string, std::string>;
  std::map<Key, std::size_t> first;
  std::vector<std::vector<std::string>> repeats(diagnostics.size());
  std::vector<Diagnostic> kept;
  std::vector<std::size_t> kept_index;
  for (std::size_t i = 0; i < diagnostics.size(); ++i) {
    Diagnostic& d = diagnostics[i];
    Key key{d.code, d.severity, d.message, d.fix ? d.fix->description : std::string()};
    auto [it, inserted] = first.try_emplace(std::move(key), kept.size());
    if (inserted) {
      kept.push_back(std::move(d));
      continue;
    }
    Diagnostic& into = kept[it->second];
    into.occurrences += d.occurrences;
    repeats[it->second].push_back(Place(d.location));
  }
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const std::vector<std::string>& more = repeats[i];
    if (more.empty()) continue;
    std::string names;
    for (std::size_t j = 0; j < more.size() && j < kNamedRepeats; ++j)
      names += (j == 0 ? "" : ", ") + more[j];
    if (more.size() > kNamedRepeats) names += ", ...";
    kept[i].notes.push_back("the same at " + std::to_string(kept[i].occurrences - 1) +
                            " more place" + (kept[i].occurrences - 1 == 1 ? "" : "s") + ": " +
                            names);
  }
  diagnostics = std::move(kept);
}

void SortDiagnostics(std::vector<Diagnostic>& diagnostics) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     if (a.severity != b.severity) return a.severity > b.severity;
                     return a.code < b.code;
                   });
}

}  // namespace tpudoctor

#include "tpudoctor/diag/diagnostic.h"

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

}  // namespace tpudoctor

#include "cli.h"
#include "commands.h"
#include "tpudoctor/rules/rules.h"

namespace tpudoctor::cli {
namespace {

void ListKind(RuleKind kind, std::ostream& out) {
  for (const RuleInfo& r : AllRules()) {
    if (r.kind != kind) continue;
    out << r.code << "  " << r.name << std::string(r.name.size() < 28 ? 28 - r.name.size() : 1, ' ')
        << r.summary << "\n";
  }
}

}  // namespace

int RulesCommand(std::ostream& out) {
  ListKind(RuleKind::kModel, out);
  out << "\njob files (`check --job`):\n";
  ListKind(RuleKind::kJob, out);
  out << "\nraised while a model is loaded:\n";
  ListKind(RuleKind::kLoad, out);
  out << "\n`tpu-doctor rule CODE` prints a rule's documentation.\n";
  return kExitOk;
}

int RuleCommand(const std::string& code, std::ostream& out, std::ostream& err) {
  auto doc = RuleDoc(code);
  if (!doc) {
    err << "tpu-doctor: no rule `" << code << "`; `tpu-doctor rules` lists them\n";
    return kExitUsage;
  }
  out << *doc;
  return kExitOk;
}

}  // namespace tpudoctor::cli

#include "cli.h"
#include "commands.h"
#include "tpudoctor/check/check.h"
#include "tpudoctor/jobs/job.h"
#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::cli {

int RulesCommand(std::ostream& out) {
  auto line = [&](std::string_view code, std::string_view name, std::string_view summary) {
    out << code << "  " << name << std::string(name.size() < 28 ? 28 - name.size() : 1, ' ')
        << summary << "\n";
  };
  for (const auto& check : AllChecks()) line(check->code(), check->name(), check->summary());
  out << "\njob files (`check --job`):\n";
  for (const auto& rule : AllJobRules()) line(rule->code(), rule->name(), rule->summary());
  out << "\n`tpu-doctor rule CODE` prints a rule's documentation.\n";
  return kExitOk;
}

int RuleCommand(const std::string& code, std::ostream& out, std::ostream& err) {
  const std::string upper = AsciiUpper(code);
  auto doc = FindEmbedded("docs/rules/" + upper + ".md");
  if (!doc) {
    err << "tpu-doctor: no rule `" << code << "`; `tpu-doctor rules` lists them\n";
    return kExitUsage;
  }
  out << *doc;
  return kExitOk;
}

}  // namespace tpudoctor::cli

#include "cli.h"
#include "commands.h"
#include "tpudoctor/check/check.h"
#include "tpudoctor/support/embedded.h"

namespace tpudoctor::cli {

int RulesCommand(std::ostream& out) {
  for (const auto& check : AllChecks()) {
    std::string name(check->name());
    out << check->code() << "  " << name
        << std::string(name.size() < 28 ? 28 - name.size() : 1, ' ') << check->summary() << "\n";
  }
  out << "\n`tpu-doctor rule CODE` prints a rule's documentation.\n";
  return kExitOk;
}

int RuleCommand(const std::string& code, std::ostream& out, std::ostream& err) {
  std::string upper = code;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto doc = FindEmbedded("docs/rules/" + upper + ".md");
  if (!doc) {
    err << "tpu-doctor: no rule `" << code << "`; `tpu-doctor rules` lists them\n";
    return kExitUsage;
  }
  out << *doc;
  return kExitOk;
}

}  // namespace tpudoctor::cli

#include "cli.h"
#include "commands.h"
#include "tpudoctor/logs/logs.h"

namespace tpudoctor::cli {

int LogsCommand(const LogsArgs& args, std::ostream& out, std::ostream& err) {
  if (args.list_signatures) {
    for (const SignatureInfo& s : LogSignatures()) {
      if (s.category.empty()) continue;
      out << s.id << "  [" << s.category << ", " << NameOf(s.severity) << "]  " << s.title << "\n";
    }
    return kExitOk;
  }
  auto diagnosis = DiagnoseLogs(args.files);
  if (!diagnosis) {
    err << "tpu-doctor: " << diagnosis.error().message << "\n";
    return kExitUsage;
  }
  out << (args.format == "json" ? RenderLogsJson(*diagnosis) : RenderLogsText(*diagnosis));
  // Any cause means the run did not go as it should (it failed, stalled or crawled): exit 1. Only a
  // log that shows no failure, no stall and no slowdown exits 0.
  return diagnosis->causes.empty() ? kExitOk : kExitFindings;
}

}  // namespace tpudoctor::cli

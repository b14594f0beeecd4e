#include <algorithm>

#include "cli.h"
#include "commands.h"
#include "model_input.h"
#include "tpudoctor/report/render.h"

namespace tpudoctor::cli {
namespace {

// What the HTML report compares: the checked target and the current generations beside it.
std::vector<std::string> ComparisonTargets(const std::string& target) {
  std::vector<std::string> out = {target};
  for (const char* t : {"tpu-v5e", "tpu-v6e", "tpu-v5p", "nvidia-h100"}) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

std::string Render(const Report& report, const std::string& format) {
  if (format == "json") return RenderJson(report);
  if (format == "sarif") return RenderSarif(report);
  if (format == "html") return RenderHtml(report);
  return RenderText(report);
}

}  // namespace

int CheckCommand(const CheckArgs& args, std::ostream& out, std::ostream& err) {
  auto target = FindTarget(args.target);
  if (!target) {
    err << "tpu-doctor: --target: " << target.error().message << "\n";
    return kExitUsage;
  }
  auto optimizer = ParseOptimizer(args.optimizer);
  auto precision = ParsePrecision(args.precision);
  if (!optimizer || !precision) {
    err << "tpu-doctor: --optimizer must be sgd, momentum, adam, adamw or adafactor; --precision fp32, bf16 or mixed\n";
    return kExitUsage;
  }
  AnalyzeOptions options = ModelOptions(args.model);
  options.target = args.target;
  options.check.train = args.train;
  options.check.optimizer = *optimizer;
  options.check.precision = *precision;
  if (args.format == "html") options.estimate_targets = ComparisonTargets(args.target);
  auto source = ReadModelArg(args.model, err);
  if (!source) return kExitUsage;
  auto report = Analyze(*source, options);
  if (!report) {
    err << "tpu-doctor: " << report.error().message << "\n";
    return kExitUsage;
  }
  out << Render(*report, args.format);

  if (args.fail_on == "never") return kExitOk;
  const Severity threshold = ParseSeverity(args.fail_on).value_or(Severity::kError);
  for (const Diagnostic& d : report->findings) {
    if (d.severity >= threshold) return kExitFindings;
  }
  return kExitOk;
}

}  // namespace tpudoctor::cli

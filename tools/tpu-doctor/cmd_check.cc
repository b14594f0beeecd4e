#include "cli.h"
#include "commands.h"
#include "model_input.h"
#include "tpudoctor/check/check.h"
#include "tpudoctor/report/render.h"

namespace tpudoctor::cli {

int CheckCommand(const CheckArgs& args, std::ostream& out, std::ostream& err) {
  auto target = FindTarget(args.target);
  if (!target) {
    err << "tpu-doctor: --target: " << target.error().message << "\n";
    return kExitUsage;
  }
  CheckOptions options;
  options.train = args.train;
  auto optimizer = ParseOptimizer(args.optimizer);
  auto precision = ParsePrecision(args.precision);
  if (!optimizer || !precision) {
    err << "tpu-doctor: --optimizer must be sgd, momentum, adam, adamw or adafactor; --precision fp32, bf16 or mixed\n";
    return kExitUsage;
  }
  options.optimizer = *optimizer;
  options.precision = *precision;
  std::string name;
  auto model = LoadModelArg(args.model, name, err);
  if (!model) return kExitUsage;
  Report report = BuildReport(name, *model, **target, RunChecks(model->graph, **target, options));
  out << (args.format == "json" ? RenderJson(report) : RenderText(report));

  if (args.fail_on == "never") return kExitOk;
  const Severity threshold = ParseSeverity(args.fail_on).value_or(Severity::kError);
  for (const Diagnostic& d : report.findings) {
    if (d.severity >= threshold) return kExitFindings;
  }
  return kExitOk;
}

}  // namespace tpudoctor::cli

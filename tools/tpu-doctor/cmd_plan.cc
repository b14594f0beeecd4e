#include "cli.h"
#include "commands.h"
#include "model_input.h"
#include "tpudoctor/jobs/emit.h"
#include "tpudoctor/jobs/plan.h"
#include "tpudoctor/support/strings.h"
#include "write_files.h"

namespace tpudoctor::cli {
namespace {

bool WriteAll(const PlanArgs& args, const std::vector<EmittedFile>& files, std::ostream& err) {
  std::vector<FileToWrite> out;
  for (const EmittedFile& f : files) {
    out.push_back({f.name, f.text, f.name.ends_with(".sh")});
  }
  auto written = WriteFilesTransaction(args.emit_dir, out, args.force);
  if (!written) err << "tpu-doctor: --emit " << written.error().message << "\n";
  return written.ok();
}

}  // namespace

int PlanCommand(const PlanArgs& args, std::ostream& out, std::ostream& err) {
  auto source = ReadModelArg(args.model, err);
  if (!source) return kExitUsage;
  PlanOptions options;
  options.shapes = ModelOptions(args.model).shapes;
  options.shapes.batch.reset();
  options.input_format = args.model.input_format;
  for (std::string_view t : Split(args.targets, ',')) {
    if (!Trim(t).empty()) options.generations.emplace_back(Trim(t));
  }
  options.max_chips = args.max_chips;
  if (args.budget > 0) options.budget_usd_per_hour = args.budget;
  if (args.global_batch > 0) options.global_batch = args.global_batch;
  options.objective =
      args.objective == "throughput" ? PlanObjective::kThroughput : PlanObjective::kCost;
  options.train = !args.inference;
  auto optimizer = ParseOptimizer(args.optimizer);
  auto precision = ParsePrecision(args.precision);
  if (!optimizer || !precision) {
    err << "tpu-doctor: --optimizer/--precision: `" << args.optimizer << "`/`" << args.precision
        << "` is not known\n";
    return kExitUsage;
  }
  options.optimizer = *optimizer;
  options.precision = *precision;
  auto plan = MakePlan(*source, options);
  if (!plan) {
    err << "tpu-doctor: " << plan.error().message << "\n";
    return kExitUsage;
  }
  std::vector<EmittedFile> files;
  if (!args.emit_dir.empty()) {
    if (plan->choice() == nullptr) {
      err << "tpu-doctor: --emit: no configuration fits, nothing to emit\n";
      return kExitFindings;
    }
    EmitOptions eo;
    eo.framework = args.framework;
    eo.zone = args.zone;
    auto emitted = EmitJobFiles(*plan, *plan->choice(), eo);
    if (!emitted) {
      err << "tpu-doctor: " << emitted.error().message << "\n";
      return kExitUsage;
    }
    files = std::move(*emitted);
  }
  const std::string text = args.format == "json" ? RenderPlanJson(*plan) : RenderPlanText(*plan);
  if (!files.empty()) {
    if (!WriteAll(args, files, err)) return kExitUsage;
  }
  out << text;
  if (!files.empty() && args.format != "json") {
    out << "\nwrote to " << args.emit_dir << ":";
    for (const EmittedFile& f : files) out << " " << f.name;
    out << "\n";
  }
  return plan->choice() == nullptr || !plan->blockers.empty() ? kExitFindings : kExitOk;
}

}  // namespace tpudoctor::cli

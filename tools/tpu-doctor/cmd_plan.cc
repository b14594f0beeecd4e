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
  options.fine_tune = args.fine_tune;
  if (args.tokens > 0) options.job_tokens = args.tokens;
  if ((args.epochs > 0) != (args.dataset_size > 0)) {
    err << "tpu-doctor: --epochs and --dataset-size go together (the job is epochs x samples)\n";
    return kExitUsage;
  }
  if (args.epochs > 0) {
    if (args.tokens > 0) {
      err << "tpu-doctor: give the job as --tokens or as --epochs with --dataset-size, not both\n";
      return kExitUsage;
    }
    options.job_samples = args.epochs * args.dataset_size;
  }
  if (args.deadline_hours > 0) {
    if (!options.job_tokens && !options.job_samples) {
      err << "tpu-doctor: --deadline needs the job's size (--tokens, or --epochs with "
             "--dataset-size)\n";
      return kExitUsage;
    }
    options.deadline_hours = args.deadline_hours;
  }
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

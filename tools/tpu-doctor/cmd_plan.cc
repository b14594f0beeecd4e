#include <filesystem>
#include <fstream>

#include "cli.h"
#include "commands.h"
#include "model_input.h"
#include "tpudoctor/jobs/emit.h"
#include "tpudoctor/jobs/plan.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::cli {
namespace {

namespace fs = std::filesystem;

// Writes every file or none: each goes to a temporary name first, and the renames happen only
// once all of them are written.
bool WriteAll(const std::string& dir, const std::vector<EmittedFile>& files, std::ostream& err) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    err << "tpu-doctor: --emit " << dir << ": exists and is not a folder\n";
    return false;
  }
  fs::create_directories(dir, ec);
  if (ec) {
    err << "tpu-doctor: --emit " << dir << ": cannot create the folder (" << ec.message() << ")\n";
    return false;
  }
  std::vector<fs::path> temps;
  auto cleanup = [&] {
    for (const fs::path& t : temps) fs::remove(t, ec);
  };
  for (const EmittedFile& f : files) {
    const fs::path tmp = fs::path(dir) / ("." + f.name + ".tpu-doctor-tmp");
    std::ofstream out(tmp, std::ios::binary);
    out << f.text;
    out.close();
    temps.push_back(tmp);
    if (!out) {
      err << "tpu-doctor: --emit " << dir << ": cannot write " << f.name << "\n";
      cleanup();
      return false;
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    fs::rename(temps[i], fs::path(dir) / files[i].name, ec);
    if (ec) {
      err << "tpu-doctor: --emit " << dir << ": cannot write " << files[i].name << "\n";
      cleanup();
      return false;
    }
  }
  return true;
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
    if (!WriteAll(args.emit_dir, files, err)) return kExitUsage;
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

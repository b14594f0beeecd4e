#include <algorithm>
#include <span>

#include "cli.h"
#include "commands.h"
#include "model_input.h"
#include "tpudoctor/jobs/job.h"
#include "tpudoctor/report/render.h"
#include "tpudoctor/support/strings.h"

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

std::string Render(std::span<const Report> reports, const CheckArgs& args) {
  if (args.format == "json") return RenderJsonAll(reports);
  if (args.format == "sarif") return RenderSarifAll(reports);
  if (args.format == "html") return RenderHtmlAll(reports);
  return RenderTextAll(reports, TextStyle{args.color});
}

// A model path of this run, and whether a folder walk found it (a bad file found in a folder is
// reported and skipped; a bad file named on the command line stops the run).
struct ModelPath {
  std::string path;
  bool from_folder = false;
};

// The model paths of this run: each argument, folders expanded; the bundled example when none.
// Subfolders a walk could not read are added to `problems`.
std::optional<std::vector<ModelPath>> ModelPaths(const CheckArgs& args,
                                                 std::vector<std::string>& problems,
                                                 std::ostream& err) {
  std::vector<std::string> given;
  if (!args.model.model.empty()) given.push_back(args.model.model);
  given.insert(given.end(), args.more_models.begin(), args.more_models.end());
  if (given.empty()) return std::vector<ModelPath>{{"", false}};
  std::vector<ModelPath> paths;
  for (const std::string& g : given) {
    auto found = FindModels(g);
    if (!found) {
      err << "tpu-doctor: " << found.error().message << "\n";
      return std::nullopt;
    }
    const bool folder = found->models.size() != 1 || found->models[0] != g;
    for (std::string& m : found->models) paths.push_back({std::move(m), folder});
    for (const Error& e : found->unreadable) problems.push_back(e.message);
  }
  return paths;
}

std::optional<AnalyzeOptions> OptionsOf(const CheckArgs& args, std::ostream& err) {
  auto target = FindSliceTarget(args.target);
  if (!target) {
    err << "tpu-doctor: --target: " << target.error().message << "\n";
    return std::nullopt;
  }
  auto optimizer = ParseOptimizer(args.optimizer);
  auto precision = ParsePrecision(args.precision);
  if (!optimizer || !precision) {
    err << "tpu-doctor: --optimizer must be sgd, momentum, adam, adamw or adafactor; --precision "
           "fp32, bf16, fp16, mixed or bf16-params\n";
    return std::nullopt;
  }
  AnalyzeOptions options = ModelOptions(args.model);
  options.target = args.target;
  options.check.train = args.train;
  options.check.optimizer = *optimizer;
  options.check.precision = *precision;
  options.check.select = args.select;
  options.check.ignore = args.ignore;
  if (args.format == "html") options.estimate_targets = ComparisonTargets(args.target);
  return options;
}

// Exit code for findings under --fail-on (`never`, or the lowest severity that fails the run).
int ExitCodeFor(std::span<const Diagnostic> findings, const std::string& fail_on) {
  if (fail_on == "never") return kExitOk;
  const Severity threshold = ParseSeverity(fail_on).value_or(Severity::kError);
  for (const Diagnostic& d : findings) {
    if (d.severity >= threshold) return kExitFindings;
  }
  return kExitOk;
}

// `check --job FILE [MODEL]`: the job spec against the catalog and, with a model, the model
// against the job's slice (at the job's per-device batch unless --batch says otherwise).
int CheckJobCommand(const CheckArgs& args, const AnalyzeOptions& options, std::ostream& out,
                    std::ostream& err) {
  auto job_source = ReadSource(args.job);
  if (!job_source) {
    err << "tpu-doctor: --job: " << job_source.error().message << "\n";
    return kExitUsage;
  }
  auto spec = ReadJobSpec(*job_source);
  if (!spec) {
    err << "tpu-doctor: --job: " << spec.error().message << "\n";
    return kExitUsage;
  }
  std::optional<LoadedModel> model;
  if (!args.model.model.empty()) {
    ModelArgs m = args.model;
    m.batch = JobShapes(*spec, ModelOptions(m).shapes).batch;
    model = LoadModelArg(m, err);
    if (!model) return kExitUsage;
  }
  JobContext context{*spec, model ? &model->graph : nullptr, options.check.train,
                     options.check.optimizer, options.check.precision};
  std::vector<Diagnostic> findings = CheckJob(context);
  std::erase_if(findings,
                [&](const Diagnostic& d) { return !RuleSelected(d.code, options.check); });
  out << (args.format == "json" ? RenderJobJson(*spec, findings) : RenderJobText(*spec, findings));
  return ExitCodeFor(findings, args.fail_on);
}

}  // namespace

int CheckCommand(const CheckArgs& args, std::ostream& out, std::ostream& err) {
  auto options = OptionsOf(args, err);
  if (!options) return kExitUsage;
  if (!args.job.empty()) {
    if (args.format != "text" && args.format != "json") {
      err << "tpu-doctor: check --job writes text or json\n";
      return kExitUsage;
    }
    if (!args.more_models.empty()) {
      err << "tpu-doctor: check --job takes at most one model\n";
      return kExitUsage;
    }
    return CheckJobCommand(args, *options, out, err);
  }
  std::vector<std::string> problems;  // models in folders that could not be checked
  auto paths = ModelPaths(args, problems, err);
  if (!paths) return kExitUsage;
  // Every model is analysed before anything is written: a bad file named on the command line
  // leaves stdout empty; one found in a folder is reported on stderr and the others are checked.
  std::vector<Report> reports;
  for (const ModelPath& path : *paths) {
    auto source = path.path.empty() ? BundledExample() : ReadSource(path.path);
    Result<Report> report = source ? Analyze(*source, *options) : Result<Report>(source.error());
    if (report) {
      reports.push_back(std::move(*report));
    } else if (path.from_folder) {
      problems.push_back(report.error().message);
    } else {
      err << "tpu-doctor: " << report.error().message << "\n";
      return kExitUsage;
    }
  }
  if (reports.empty()) {
    err << "tpu-doctor: " << problems.front() << "\n";
    return kExitUsage;
  }
  out << Render(reports, args);
  int code = kExitOk;
  for (const Report& r : reports) code = std::max(code, ExitCodeFor(r.findings, args.fail_on));
  if (problems.empty()) return code;
  for (const std::string& p : problems) err << "tpu-doctor: " << p << "\n";
  err << "tpu-doctor: the report covers " << Plural(reports.size(), "model", "models") << "; "
      << Plural(problems.size(), "file or folder", "files or folders")
      << " could not be checked (listed above)\n";
  return kExitUsage;
}

}  // namespace tpudoctor::cli

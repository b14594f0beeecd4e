#include <algorithm>
#include <filesystem>
#include <span>

#include "cli.h"
#include "commands.h"
#include "model_input.h"
#include "tpudoctor/jobs/job.h"
#include "tpudoctor/report/render.h"
#include "tpudoctor/script/script.h"
#include "tpudoctor/support/strings.h"
#include "write_files.h"

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
  if (args.statistics) return RenderStatistics(reports);
  if (args.format == "concise") return RenderConcise(reports);
  if (args.format == "json") return RenderJsonAll(reports);
  if (args.format == "sarif") return RenderSarifAll(reports);
  if (args.format == "html") return RenderHtmlAll(reports);
  return RenderTextAll(reports, TextStyle{args.color, args.ops});
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
        << PrecisionChoices() << "\n";
    return std::nullopt;
  }
  if (auto refusal = TrainingPrecisionRefusal(*precision); refusal && args.train) {
    err << "tpu-doctor: " << *refusal << "\n";
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
  std::optional<JobModel> judged;
  if (!args.model.model.empty()) {
    ModelArgs m = args.model;
    judged = JobModel{m.model, ModelBatchOf(*spec, ModelOptions(m).shapes.batch)};
    m.batch = judged->batch.per_device;
    model = LoadModelArg(m, err);
    if (!model) return kExitUsage;
  }
  JobContext context{*spec, model ? &model->graph : nullptr, options.check.train,
                     options.check.optimizer, options.check.precision};
  std::vector<Diagnostic> findings = CheckJob(context);
  std::erase_if(findings,
                [&](const Diagnostic& d) { return !RuleSelected(d.code, options.check); });
  const JobModel* shown = judged ? &*judged : nullptr;
  out << (args.format == "json" ? RenderJobJson(*spec, shown, findings)
                                : RenderJobText(*spec, shown, findings));
  return ExitCodeFor(findings, args.fail_on);
}

// One script --fix or --diff changes.
struct FixedScript {
  std::string path;
  std::string before;
  FixOutcome outcome;
};

// Writes a fixed script over the original, atomically (a temporary renamed into place), keeping
// its execute bit. A symlink is refused: the fix would replace the link, not the file it names.
Result<Ok> WriteFixed(const FixedScript& f) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_symlink(f.path, ec)) {
    return MakeError(f.path + " is a symlink; run --fix on the file it points to");
  }
  const fs::perms perms = fs::status(f.path, ec).permissions();
  const bool executable = (perms & fs::perms::owner_exec) != fs::perms::none;
  const fs::path path(f.path);
  const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
  return WriteFilesTransaction(dir, {{path.filename().string(), f.outcome.bytes, executable}},
                               /*overwrite=*/true);
}

// `check --fix` / `--diff` on Python scripts and notebooks: every fix is computed before anything
// is written; --diff prints them and writes nothing (exit 1 when a file would change); --fix
// writes the changed files and reports what is left.
int FixCommand(const CheckArgs& args, const AnalyzeOptions& options,
               const std::vector<ModelPath>& paths, std::ostream& out, std::ostream& err) {
  std::vector<FixedScript> fixed;
  for (const ModelPath& p : paths) {
    if (p.path.empty() || !IsScriptPath(p.path)) {
      if (p.from_folder) continue;
      err << "tpu-doctor: --fix and --diff apply to Python scripts and notebooks (.py, .ipynb), "
             "not "
          << (p.path.empty() ? std::string("the bundled example") : p.path) << "\n";
      return kExitUsage;
    }
    auto source = ReadSource(p.path);
    if (!source) {
      err << "tpu-doctor: " << source.error().message << "\n";
      return kExitUsage;
    }
    auto outcome = FixScript(*source, options.check, args.unsafe_fixes);
    if (!outcome) {
      err << "tpu-doctor: " << outcome.error().message << "\n";
      return kExitUsage;
    }
    fixed.push_back({p.path, std::move(source->bytes), std::move(*outcome)});
  }
  if (args.diff) {
    bool changes = false;
    for (const FixedScript& f : fixed) {
      const std::string diff = UnifiedDiff(f.path, f.before, f.outcome.bytes);
      out << diff;
      changes |= !diff.empty();
    }
    return changes ? kExitFindings : kExitOk;
  }
  std::vector<Report> reports;
  for (const FixedScript& f : fixed) {
    if (f.outcome.bytes != f.before) {
      if (auto written = WriteFixed(f); !written) {
        err << "tpu-doctor: --fix: " << written.error().message << "\n";
        return kExitUsage;
      }
    }
    err << "tpu-doctor: " << f.path << ": fixed "
        << Plural(f.outcome.applied, "finding", "findings");
    if (f.outcome.unsafe_left > 0) {
      err << "; "
          << Plural(f.outcome.unsafe_left, "more has an unsafe fix", "more have unsafe fixes")
          << " (--unsafe-fixes)";
    }
    err << "\n";
    reports.push_back(f.outcome.after);
  }
  if (reports.empty()) {
    err << "tpu-doctor: no Python scripts or notebooks to fix\n";
    return kExitUsage;
  }
  out << Render(reports, args);
  int code = kExitOk;
  for (const Report& r : reports) code = std::max(code, ExitCodeFor(r.findings, args.fail_on));
  return code;
}

}  // namespace

int CheckCommand(const CheckArgs& args, std::ostream& out, std::ostream& err) {
  auto options = OptionsOf(args, err);
  if (!options) return kExitUsage;
  if (args.unsafe_fixes && !args.fix && !args.diff) {
    err << "tpu-doctor: --unsafe-fixes goes with --fix or --diff\n";
    return kExitUsage;
  }
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
  if (args.fix || args.diff) return FixCommand(args, *options, *paths, out, err);
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

#include "tpudoctor/analyze.h"

#include <algorithm>

#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/script/script.h"
#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

constexpr const char* kExampleModel = "examples/resnet50.onnx";

// The inputs must be static for sizes and times to mean anything.
std::optional<std::string> NonStaticInput(const Graph& g) {
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    if (v.type.shape.is_static()) continue;
    std::string hint;
    for (const Dim& d : v.type.shape.dims()) {
      if (d.is_symbol())
        hint = "pass `--dim " + d.symbol() + "=N` (or `--batch N` for the batch dim)";
      if (d.is_bounded() && hint.empty())
        hint = "`" + d.ToString() + "` is a bounded dynamic dim (XLA pads it to " +
               std::to_string(d.bound()) + "); export the program with static shapes";
    }
    if (hint.empty()) hint = "the model does not name the dim; re-export it with a fixed size";
    return "input `" + v.name + "` has shape " + v.type.shape.ToString() +
           "; an estimate needs static shapes: " + hint;
  }
  return std::nullopt;
}

Result<std::vector<SliceTarget>> ResolveSlices(const std::vector<std::string>& names) {
  std::vector<SliceTarget> slices;
  for (const std::string& name : names) {
    auto t = FindSliceTarget(name);
    if (!t) return t.error();
    slices.push_back(*t);
  }
  return slices;
}

// Fills report.estimates, or says in report.estimate_unavailable why the model cannot be
// estimated. The batch is the one the graph's shapes were made static with; an XLA program, whose
// inputs do not show it, takes --batch as the samples each step processes.
// The estimate the checks made, and what it was asked with.
struct CheckedEstimate {
  const Estimate* estimate;
  const EstimateOptions& options;
};

Result<Ok> EstimateOnSlices(const Graph& graph, const std::vector<SliceTarget>& slices,
                            const AnalyzeOptions& options,
                            const std::optional<CheckedEstimate>& checked, Report& report) {
  const std::optional<std::int64_t> batch =
      graph.facts().batch ? graph.facts().batch : options.shapes.batch;
  if (!batch) {
    report.estimate_unavailable =
        graph.facts().xla_program
            ? "estimate needs --batch N: no parameter of this XLA program carries the data into a "
              "matmul, convolution or embedding (or it is an optimized dump), so the samples each "
              "step processes are not known"
            : "estimate needs --batch N (the per-device batch)";
    return Ok{};
  }
  if (auto bad = NonStaticInput(graph)) {
    report.estimate_unavailable = report.model + ": " + *bad;
    return Ok{};
  }
  report.estimate_batch = *batch;
  for (const SliceTarget& slice : slices) {
    const auto price = options.prices.find(slice.target->name);
    EstimateOptions o;
    o.train = options.check.train;
    o.optimizer = options.check.optimizer;
    o.precision = options.check.precision;
    o.batch = *batch;
    o.chips = slice.chips;
    o.parallel = options.parallel;
    o.remat = options.remat;
    o.runtime = options.runtime;
    o.channels_last = options.channels_last;
    o.attention_kernel = options.attention_kernel;
    o.slices = options.slices;
    o.micro_batches = options.micro_batches;
    o.distributed_optimizer = options.distributed_optimizer;
    o.dedup_expert_dispatch = options.dedup_expert_dispatch;
    o.overlap_expert_comm = options.overlap_expert_comm;
    o.ring_context = options.ring_context;
    o.vocab_tiles = options.vocab_tiles;
    o.keep_attention_output = options.keep_attention_output;
    o.lora_rank = options.lora_rank;
    o.lora_targets = options.lora_targets;
    o.dcn = options.dcn;
    o.serve = options.serve;
    if (options.serve && options.parallel == Parallelism{})
      o.parallel = Parallelism{0, 1, slice.chips * std::max(1, slice.target->devices_per_chip)};
    o.dataset_size = options.dataset_size;
    if (price != options.prices.end()) o.usd_per_chip_hour = price->second;
    if (options.calibration) o.calibration = &*options.calibration;
    // The checks already estimated this step on this chip: reuse it.
    if (checked && slice.target->name == report.target && SameStep(o, checked->options)) {
      report.estimates.push_back(*checked->estimate);
      report.estimates.back().target = slice.name;
      continue;
    }
    auto e = EstimateStep(graph, *slice.target, o);
    if (!e) return MakeError(slice.name + ": " + e.error().message);
    e->target = slice.name;
    report.estimates.push_back(std::move(*e));
  }
  return Ok{};
}

// A script is read as source: the flags that shape or size a model change nothing in it.
std::vector<std::string> ScriptIgnoredFlags(const AnalyzeOptions& options) {
  std::vector<std::string> flags;
  if (options.shapes.batch) flags.push_back("--batch");
  if (!options.shapes.dims.empty()) flags.push_back("--dim");
  if (options.check.train) flags.push_back("--train");
  if (flags.empty()) return {};
  return {Join(flags, ", ") + (flags.size() == 1 ? " applies" : " apply") +
          " to models, not to a script read as source: not used here"};
}

}  // namespace

Result<Source> BundledExample() {
  auto bytes = FindEmbedded(kExampleModel);
  if (!bytes) return MakeError("the bundled example model is missing from this build");
  Source source;
  source.display_name = kExampleModel;
  source.bytes = std::string(*bytes);
  return source;
}

void SetServing(AnalyzeOptions& options, const ServingOptions& serve) {
  if (options.shapes.batch && *options.shapes.batch != 1) {
    options.flag_notes.push_back(
        "--batch " + std::to_string(*options.shapes.batch) +
        " does not apply to serving: each prompt's prefill runs at batch 1 and a decode step holds "
        "the --concurrency sequences in flight (" +
        std::to_string(serve.concurrency) + ")");
  }
  if (options.dataset_size) {
    options.flag_notes.push_back(
        "--dataset-size does not apply to serving: an epoch is a training figure (serving is "
        "costed per 1M output tokens)");
  }
  options.serve = serve;
  options.shapes.batch = 1;
  // A bucketed prefill runs the prompt padded to its bucket: the graph is built over that.
  options.shapes.config_seq =
      serve.bucketed_prefill ? PrefillBucket(serve.prompt_tokens) : serve.prompt_tokens;
}

Result<Ok> SetPrice(AnalyzeOptions& options, const std::string& target, double usd_per_chip_hour) {
  auto slice = FindSliceTarget(target);
  if (!slice) return slice.error();
  if (!(usd_per_chip_hour >= 0) || usd_per_chip_hour > 1e6)
    return MakeError("the price for `" + target + "` is not a dollar figure per chip-hour");
  options.prices[slice->target->name] = usd_per_chip_hour;
  return Ok{};
}

Result<Report> Analyze(const Source& source, const AnalyzeOptions& options) {
  if (options.input_format == "python" ||
      (options.input_format.empty() && IsScriptPath(source.display_name))) {
    auto report = CheckScript(source, options.check, options.free_model);
    if (report) report->flag_notes = ScriptIgnoredFlags(options);
    return report;
  }
  // A slice name (`v5e-8`) checks one of its chips: the rules judge a device.
  auto slice = FindSliceTarget(options.target);
  if (!slice) return slice.error();
  const TargetSpec& target = *slice->target;
  auto slices = ResolveSlices(options.estimate_targets);
  if (!slices) return slices.error();
  auto model = LoadModelAs(source, options.shapes, options.input_format);
  if (!model) return model.error();

  const ModelAnalysis analysis(model->graph, target, options.check, slice->chips);
  std::vector<Diagnostic> findings = RunChecks(analysis, options.check);
  std::erase_if(model->diagnostics,
                [&](const Diagnostic& d) { return !RuleSelected(d.code, options.check); });
  Report report = BuildReport(source.display_name, *model, target, std::move(findings));
  report.flag_notes = options.flag_notes;
  report.facts = model->graph.facts();
  if (slice->chips > 1) report.slice = slice->name;
  report.train = options.check.train;
  report.optimizer = options.check.optimizer;
  report.precision = options.check.precision;
  report.estimate = analysis.estimate();
  if (!slices->empty()) {
    std::optional<CheckedEstimate> checked;
    if (report.estimate)
      checked.emplace(CheckedEstimate{&*report.estimate, analysis.estimate_options()});
    if (auto r = EstimateOnSlices(model->graph, *slices, options, checked, report); !r)
      return r.error();
  }
  if (!options.free_model) (void)new LoadedModel(std::move(*model));  // see AnalyzeOptions
  return report;
}

}  // namespace tpudoctor

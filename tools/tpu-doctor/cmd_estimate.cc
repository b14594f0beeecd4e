#include <cstdlib>

#include "cli.h"
#include "commands.h"
#include "model_input.h"
#include "tpudoctor/report/render.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::cli {
namespace {

// `TARGET=USD` into options.prices; false when malformed.
bool AddPriceOverride(const std::string& text, AnalyzeOptions& options) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return false;
  const std::string number(Trim(text.substr(eq + 1)));
  char* end = nullptr;
  const double usd = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size()) return false;
  return SetPrice(options, std::string(Trim(text.substr(0, eq))), usd).ok();
}

// Estimate flags → AnalyzeOptions; on a bad flag writes one line to `err` and returns nullopt.
std::optional<AnalyzeOptions> EstimateOptionsOf(const EstimateArgs& args, std::ostream& err) {
  auto optimizer = ParseOptimizer(args.optimizer);
  auto precision = ParsePrecision(args.precision);
  if (!optimizer) {
    err << "tpu-doctor: --optimizer: `" << args.optimizer
        << "` is not sgd, momentum, adam, adamw or adafactor\n";
    return std::nullopt;
  }
  if (!precision) {
    err << "tpu-doctor: --precision: `" << args.precision << "` is not " << PrecisionChoices()
        << "\n";
    return std::nullopt;
  }
  AnalyzeOptions options = ModelOptions(args.model);
  options.check.train = args.train;
  options.check.optimizer = *optimizer;
  options.check.precision = *precision;
  options.dataset_size = args.dataset_size;
  if (!args.parallel.empty()) {
    auto parallel = ParseParallelism(args.parallel);
    if (!parallel) {
      err << "tpu-doctor: " << parallel.error().message << "\n";
      return std::nullopt;
    }
    options.parallel = *parallel;
  }
  options.slices = args.slices;
  options.micro_batches = args.micro_batches;
  options.distributed_optimizer = args.distributed_optimizer;
  options.dedup_expert_dispatch = args.dedup_expert_dispatch;
  options.overlap_expert_comm = args.overlap_expert_comm;
  options.ring_context = args.ring_context;
  options.vocab_tiles = args.vocab_tiles;
  options.keep_attention_output = args.keep_attention_output;
  options.lora_rank = args.lora_rank;
  options.lora_targets = *ParseLoraTargets(args.lora_targets);  // CLI checked the name
  if ((args.micro_batches > 1 || args.distributed_optimizer) && !args.train) {
    err << "tpu-doctor: --micro-batches and --distributed-optimizer describe a training step; "
           "add --train\n";
    return std::nullopt;
  }
  if (args.serve) {
    if (args.train) {
      err << "tpu-doctor: --serve estimates inference; drop --train\n";
      return std::nullopt;
    }
    SetServing(options, ServingOptions{args.prompt_tokens, args.output_tokens, args.concurrency,
                                       args.kv_cache_dtype, args.kv_reads_per_query_head,
                                       args.kv_cache_length, args.bucketed_prefill,
                                       args.replicated_prefill, args.requests});
  } else if (!args.kv_cache_dtype.empty() || args.kv_reads_per_query_head ||
             args.kv_cache_length > 0 || args.bucketed_prefill || args.replicated_prefill ||
             args.requests > 0) {
    err << "tpu-doctor: --kv-cache-dtype, --kv-reads-per-query-head, --kv-cache-length, "
           "--bucketed-prefill, --replicated-prefill and --requests are --serve options\n";
    return std::nullopt;
  }
  if (auto dcn = ParseDcnParallelism(args.dcn)) {
    options.dcn = *dcn;
  } else {
    err << "tpu-doctor: --dcn: `" << args.dcn << "` is not data or fsdp\n";
    return std::nullopt;
  }
  if (auto remat = ParseRemat(args.remat)) {
    options.remat = *remat;
  } else {
    err << "tpu-doctor: --remat: `" << args.remat << "` is not " << RematChoices() << "\n";
    return std::nullopt;
  }
  options.channels_last = args.channels_last;
  options.attention_kernel = args.attention_kernel;
  if (auto runtime = ParseRuntime(args.runtime)) {
    options.runtime = *runtime;
  } else {
    err << "tpu-doctor: --runtime: `" << args.runtime << "` is not " << RuntimeChoices() << "\n";
    return std::nullopt;
  }
  for (std::string_view name : Split(args.targets, ',')) {
    std::string target(Trim(name));
    if (auto t = FindSliceTarget(target); !t) {
      err << "tpu-doctor: --targets: " << t.error().message << "\n";
      return std::nullopt;
    }
    options.estimate_targets.push_back(target);
  }
  for (const std::string& price : args.prices) {
    if (!AddPriceOverride(price, options)) {
      err << "tpu-doctor: --price: `" << price
          << "` is not TARGET=USD_PER_CHIP_HOUR with a known target and a price in dollars "
             "(e.g. tpu-v5e=0.84)\n";
      return std::nullopt;
    }
  }
  if (!args.calibration_file.empty()) {
    auto src = ReadSource(args.calibration_file);
    if (!src) {
      err << "tpu-doctor: --calibration: " << src.error().message << "\n";
      return std::nullopt;
    }
    auto cal = ParseCalibration(src->bytes, args.calibration_file);
    if (!cal) {
      err << "tpu-doctor: --calibration: " << cal.error().message << "\n";
      return std::nullopt;
    }
    options.calibration = std::move(*cal);
  }
  return options;
}

}  // namespace

int EstimateCommand(const EstimateArgs& args, std::ostream& out, std::ostream& err) {
  auto options = EstimateOptionsOf(args, err);
  if (!options) return kExitUsage;
  auto source = ReadModelArg(args.model, err);
  if (!source) return kExitUsage;
  auto report = Analyze(*source, *options);
  if (!report) {
    err << "tpu-doctor: " << report.error().message << "\n";
    return kExitUsage;
  }
  if (report->estimates.empty()) {
    err << "tpu-doctor: " << report->estimate_unavailable << "\n";
    return kExitUsage;
  }
  out << (args.format == "json" ? RenderEstimateJson(*report)
          : args.compare        ? RenderEstimateCompare(*report)
                                : RenderEstimateText(*report));
  return kExitOk;
}

}  // namespace tpudoctor::cli

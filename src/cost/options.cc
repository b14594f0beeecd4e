// The names of the estimate's options (optimizer, precision, runtime) as the CLI, the Python
// module and the reports spell them, and which runtime a target runs.
#include <algorithm>

#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {

std::optional<Optimizer> ParseOptimizer(std::string_view name) {
  if (name == "sgd") return Optimizer::kSgd;
  if (name == "momentum") return Optimizer::kMomentum;
  if (name == "adam" || name == "adamw") return Optimizer::kAdam;
  if (name == "adafactor") return Optimizer::kAdafactor;
  return std::nullopt;
}

std::optional<Precision> ParsePrecision(std::string_view name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "bf16") return Precision::kBf16;
  if (name == "fp16") return Precision::kFp16;
  if (name == "mixed") return Precision::kMixed;
  if (name == "bf16-params") return Precision::kBf16Params;
  if (name == "fp8") return Precision::kFp8;
  if (name == "int8") return Precision::kInt8;
  if (name == "int8w") return Precision::kInt8Weights;
  return std::nullopt;
}

std::optional<LoraTargets> ParseLoraTargets(std::string_view name) {
  if (name == "all") return LoraTargets::kAll;
  if (name == "attention") return LoraTargets::kAttention;
  if (name == "qkv") return LoraTargets::kQkv;
  return std::nullopt;
}

std::string_view NameOf(LoraTargets t) {
  switch (t) {
    case LoraTargets::kAll:
      return "all";
    case LoraTargets::kAttention:
      return "attention";
    case LoraTargets::kQkv:
      return "qkv";
  }
  return "all";
}

bool RematPerLayer(Remat r) { return r == Remat::kLayer || r == Remat::kOffload; }

bool EightBitMatmuls(Precision p) { return p == Precision::kFp8 || p == Precision::kInt8; }

bool EightBitWeights(Precision p) { return EightBitMatmuls(p) || p == Precision::kInt8Weights; }

std::optional<std::string> TrainingPrecisionRefusal(Precision p) {
  if (p != Precision::kInt8Weights) return std::nullopt;
  return "--precision int8w is weight-only int8 for serving and inference; a training step runs "
         "int8 (AQT: MaxText's quantization=int8), fp8 or bf16";
}

namespace {

// Names for a message: "a, b or c".
std::string Alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

struct KvCacheDtype {
  std::string_view name;
  int bytes;
};
// int8: JetStream's quantized KV cache (its per-token scales are a rounding error beside the
// heads' widths) and TensorRT-LLM's int8 cache.
constexpr KvCacheDtype kKvCacheDtypes[] = {{"bf16", 2}, {"fp16", 2}, {"fp8", 1}, {"int8", 1}};

}  // namespace

std::optional<int> KvCacheDtypeBytes(std::string_view name) {
  for (const KvCacheDtype& d : kKvCacheDtypes) {
    if (d.name == name) return d.bytes;
  }
  return std::nullopt;
}

const std::vector<std::string>& KvCacheDtypeNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const KvCacheDtype& d : kKvCacheDtypes) out.emplace_back(d.name);
    return out;
  }();
  return names;
}

std::int64_t PrefillBucket(std::int64_t tokens) {
  std::int64_t bucket = 16;
  while (bucket < tokens && bucket < (std::int64_t{1} << 62)) bucket *= 2;
  return bucket;
}

const std::vector<std::string>& PrecisionNames() {
  static const std::vector<std::string> names = {"fp32", "bf16",  "fp16",  "fp8",
                                                 "int8", "int8w", "mixed", "bf16-params"};
  return names;
}

std::string PrecisionChoices() { return Alternatives(PrecisionNames()); }

const std::vector<std::string>& RematNames() {
  static const std::vector<std::string> names = {"none", "dots", "layer", "offload",
                                                 "save_dot_except_mlpwi"};
  return names;
}

std::string RematChoices() {
  return Alternatives(
      {"none", "dots (minimal)", "layer (full)", "offload", "save_dot_except_mlpwi"});
}

std::string KvCacheDtypeChoices() { return Alternatives(KvCacheDtypeNames()); }

std::string_view NameOf(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kMomentum:
      return "momentum";
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kAdafactor:
      return "adafactor";
  }
  return "adam";
}

const std::vector<ExecutionModel>& ExecutionModels() {
  static const auto* models = [] {
    auto* m = new std::vector<ExecutionModel>();
    for (const auto& cols : EmbeddedTsvRows("data/calibration/runtimes.tsv")) {
      if (cols.size() != 4) continue;
      ExecutionModel model;
      model.name = std::string(cols[0]);
      model.fused = cols[1] == "fused";
      for (std::string_view d : Split(cols[2], ',')) {
        if (d != "-") model.default_for.emplace_back(d);
      }
      model.description = std::string(cols[3]);
      m->push_back(std::move(model));
    }
    return m;
  }();
  return *models;
}

std::optional<Runtime> ParseRuntime(std::string_view name) {
  if (name == "auto") return Runtime();
  const auto& models = ExecutionModels();
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (models[i].name == name) return Runtime(static_cast<int>(i));
  }
  return std::nullopt;
}

std::string_view NameOf(Runtime r) {
  return r.is_auto() ? std::string_view("auto") : std::string_view(r.model().name);
}

std::string RuntimeChoices() {
  std::vector<std::string> names = {"auto"};
  for (const ExecutionModel& m : ExecutionModels()) names.push_back(m.name);
  return Alternatives(names);
}

namespace {

// The execution model `auto` picks for `what` (the default_for column).
Runtime DefaultFor(std::string_view what) {
  for (const ExecutionModel& m : ExecutionModels()) {
    if (std::ranges::find(m.default_for, what) != m.default_for.end()) return *ParseRuntime(m.name);
  }
  return Runtime();
}

}  // namespace

Runtime ResolveRuntime(Runtime requested, const TargetSpec& target, const Graph& graph,
                       bool serving) {
  if (target.is_tpu()) return DefaultFor("tpu");  // every TPU program is an XLA program
  if (!requested.is_auto()) return requested;
  if (graph.facts().xla_program) return DefaultFor("xla_program");
  return DefaultFor(serving ? "gpu_serving" : "gpu");
}

std::string_view NameOf(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kMixed:
      return "mixed";
    case Precision::kBf16Params:
      return "bf16-params";
    case Precision::kFp8:
      return "fp8";
    case Precision::kInt8:
      return "int8";
    case Precision::kInt8Weights:
      return "int8w";
  }
  return "bf16";
}

}  // namespace tpudoctor

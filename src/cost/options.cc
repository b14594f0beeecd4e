// The names of the estimate's options (optimizer, precision, runtime) as the CLI, the Python
// module and the reports spell them, and which runtime a target runs.
#include "tpudoctor/cost/estimate.h"

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
  return std::nullopt;
}

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

std::optional<Runtime> ParseRuntime(std::string_view name) {
  if (name == "auto") return Runtime::kAuto;
  if (name == "eager") return Runtime::kEager;
  if (name == "xla") return Runtime::kXla;
  if (name == "compiled") return Runtime::kCompiled;
  return std::nullopt;
}

std::string_view NameOf(Runtime r) {
  switch (r) {
    case Runtime::kAuto:
      return "auto";
    case Runtime::kEager:
      return "eager";
    case Runtime::kXla:
      return "xla";
    case Runtime::kCompiled:
      return "compiled";
  }
  return "auto";
}

Runtime ResolveRuntime(Runtime requested, const TargetSpec& target, const Graph& graph) {
  if (target.is_tpu()) return Runtime::kXla;  // every TPU program is an XLA program
  if (requested != Runtime::kAuto) return requested;
  return graph.facts().xla_program ? Runtime::kXla : Runtime::kEager;
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
  }
  return "bf16";
}

}  // namespace tpudoctor

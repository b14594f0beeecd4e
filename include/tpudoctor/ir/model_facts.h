// ModelFacts: what the loader knows about a model as a whole, decided once when it is loaded so
// that checks, the cost model and renderers read typed facts instead of guessing them again from
// op names or the first input's shape.
//
// The facts are filled by LoadModel (src/frontends/load.cc) from what each frontend reports: the
// file format, the framework that wrote it and its version, whether it is a compiled XLA program
// (fixed shapes; its parameters include the weights), and the per-device batch with where it came
// from. A graph built by hand (tests, the IR text parser) has default facts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tpudoctor {

// The framework that wrote the model, as far as the file tells.
enum class Framework : std::uint8_t { kUnknown, kPyTorch, kKeras, kTensorFlow, kJax };
std::string_view NameOf(Framework framework);  // "unknown", "pytorch", "keras", ...

// Where the batch size came from.
enum class BatchSource : std::uint8_t {
  kNone,   // unknown: a symbolic leading dim, no inputs, or an XLA program (see below)
  kFlag,   // --batch made the leading dim of the inputs static
  kModel,  // the model's own static leading dim
};
std::string_view NameOf(BatchSource source);  // "none", "flag", "model"

struct ModelFacts {
  std::string format;  // "onnx", "hlo", "stablehlo", "torch.export", "keras", "tf-savedmodel", ...
  std::string producer;  // "pytorch 2.11.0", "keras 3.6.0", when the file says
  Framework framework = Framework::kUnknown;
  std::string framework_version;  // "2.11.0", when the file says
  // A compiled XLA program (HLO or StableHLO): its shapes are fixed by the compiler and its first
  // parameters are often the weights, so no batch can be read off its inputs.
  bool xla_program = false;
  // The per-device batch the graph's shapes were made static with; nullopt when unknown.
  std::optional<std::int64_t> batch;
  BatchSource batch_source = BatchSource::kNone;
  // MoE: the routed experts of each MoE layer, when the loader knows them (model configs); 0
  // otherwise. The cost model finds the experts' batched matmuls by it (expert parallelism).
  std::int64_t experts = 0;
  std::int64_t experts_per_token = 0;

  // The per-device batch a step of the model is estimated at when nobody gives one: its own, or
  // 1 when it has none (a compiled XLA program; the checks' estimate and the job rules use it).
  std::int64_t StepBatch() const { return batch && *batch >= 1 ? *batch : 1; }
};

}  // namespace tpudoctor

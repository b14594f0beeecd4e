#include <algorithm>
#include <atomic>
#include <optional>
#include <set>

#include "src/frontends/archives.h"
#include "src/support/zip_archive.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/frontend/hlo.h"
#include "tpudoctor/frontend/keras.h"
#include "tpudoctor/frontend/model_config.h"
#include "tpudoctor/frontend/onnx.h"
#include "tpudoctor/frontend/stablehlo.h"
#include "tpudoctor/frontend/tf.h"
#include "tpudoctor/frontend/torch_export.h"
#include "tpudoctor/ir/verify.h"

namespace tpudoctor {
namespace {

// Zip archives, opened once: a torch.export .pt2 or a Keras 3 .keras. A damaged or hostile
// archive is reported as such, not as an unknown format.
Result<LoadedModel> LoadArchive(const Source& source, const ShapeOptions& options) {
  auto zip = ZipArchive::Open(source.bytes, source.display_name);
  if (!zip) return zip.error();
  if (IsTorchExportArchive(**zip))
    return LoadTorchExportArchive(**zip, source.display_name, options);
  if (IsKerasArchive(**zip)) return LoadKerasArchive(**zip, source.display_name, options);
  return MakeError(
      source.display_name +
      ": a zip archive, but neither a torch.export .pt2 (no `models/model.json`) nor a "
      ".keras model (no `config.json`)");
}

// The framework named by a producer string ("pytorch 2.11.0", "keras 3.6.0", "tf2onnx 1.16").
Framework FrameworkOfProducer(std::string_view producer, std::string& version) {
  const std::size_t space = producer.find(' ');
  const std::string_view name = producer.substr(0, space);
  if (space != std::string_view::npos) {
    version = std::string(producer.substr(space + 1, producer.find(',') - space - 1));
  }
  if (name == "pytorch") return Framework::kPyTorch;
  if (name == "keras" || name == "keras2onnx") return Framework::kKeras;
  if (name == "tensorflow" || name == "tf2onnx") return Framework::kTensorFlow;
  if (name == "jax" || name == "jax2tf") return Framework::kJax;
  return Framework::kUnknown;
}

// Whether the model puts a leading dim of 1 in front of `input` itself (through elementwise ops):
// torchvision's detection models take one CHW image and unsqueeze it, so the input's leading dim
// is the channels, and each step sees one sample.
bool AddsOwnBatchDim(const Graph& graph, ValueId input) {
  std::vector<ValueId> frontier{input};
  for (int depth = 0; depth < 6 && !frontier.empty(); ++depth) {
    std::vector<ValueId> next;
    for (ValueId v : frontier) {
      const Shape& in = graph.value(v).type.shape;
      for (NodeId user : graph.value(v).users) {
        const Node& n = graph.node(user);
        if (n.outputs.empty()) continue;
        const Shape& out = graph.value(n.outputs[0]).type.shape;
        if (n.kind == OpKind::kLayout && in.rank_known() && out.rank_known() &&
            out.rank() == in.rank() + 1 && out.dim(0).is_static() && out.dim(0).value() == 1 &&
            std::equal(in.dims().begin(), in.dims().end(), out.dims().begin() + 1))
          return true;
        if (n.kind == OpKind::kElementwise || n.kind == OpKind::kCast) next.push_back(n.outputs[0]);
      }
    }
    frontier = std::move(next);
  }
  return false;
}

// Whether a node hands its operands' data on to its results for ProgramBatch: pointwise,
// conversion, layout and inlined-call ops.
bool PassesData(const Node& n) {
  return n.kind == OpKind::kElementwise || n.kind == OpKind::kCast || n.kind == OpKind::kLayout ||
         n.op == Op::kCall;
}

// The values that reach the activation operand of a matmul or convolution (operand 0: the data;
// weights are operand 1, forward and in JAX's gradients alike) through ops that pass data on: one
// walk back from every such operand, each value visited once.
std::vector<bool> FeedActivations(const Graph& graph) {
  std::vector<bool> feeds(graph.values().size(), false);
  std::vector<ValueId> stack;
  auto visit = [&](ValueId v) {
    if (v == kNoValue || feeds[static_cast<std::size_t>(v)]) return;
    feeds[static_cast<std::size_t>(v)] = true;
    stack.push_back(v);
  };
  for (const Node& n : graph.nodes()) {
    if (n.kind == OpKind::kMatMul || n.kind == OpKind::kConv) visit(n.input(0));
  }
  while (!stack.empty()) {
    const ValueId v = stack.back();
    stack.pop_back();
    const NodeId p = graph.value(v).producer;
    if (p == kNoNode || !PassesData(graph.node(p))) continue;
    for (ValueId in : graph.node(p).inputs) visit(in);
  }
  return feeds;
}

// Whether a parameter reaches a gather, directly or through ops that pass data on (a cast, a
// reshape): as the table it looks rows up in (an embedding: a weight, even where a tied output
// layer multiplies it as a dot's left operand), or as the indices (token ids).
enum class GatherRole { kTable, kIndices };
bool ReachesGather(const Graph& graph, ValueId param, GatherRole role) {
  std::vector<ValueId> stack = {param};
  std::vector<bool> seen(graph.values().size(), false);
  while (!stack.empty()) {
    const ValueId v = stack.back();
    stack.pop_back();
    if (seen[static_cast<std::size_t>(v)]) continue;
    seen[static_cast<std::size_t>(v)] = true;
    for (NodeId u : graph.value(v).users) {
      const Node& n = graph.node(u);
      if (n.kind == OpKind::kGather && (n.input(0) == v) == (role == GatherRole::kTable))
        return true;
      if (PassesData(n) && n.op != Op::kCall && !n.outputs.empty()) stack.push_back(n.outputs[0]);
    }
  }
  return false;
}

// The batch of a compiled XLA program, whose parameters mix weights, optimizer state and data: the
// leading dim of the data, i.e. the highest-rank float parameter that feeds the activation side of
// a matmul or convolution (an embedding table never), or else the highest-rank
// integer parameter used as gather indices.
// An optimized program (one with fusions) has swapped operands and relayouts; its batch is not
// read.
std::optional<std::int64_t> ProgramBatch(const Graph& graph) {
  if (std::ranges::any_of(graph.nodes(), [](const Node& n) { return n.op_type == "fusion"; }))
    return std::nullopt;
  const std::vector<bool> feeds = FeedActivations(graph);
  const Value* best = nullptr;
  bool best_is_activation = false;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    const Shape& shape = v.type.shape;
    if (!shape.rank_known() || shape.rank() < 1 || !shape.dim(0).is_static()) continue;
    const bool is_float = TraitsOf(v.type.dtype).cls == DTypeClass::kFloat;
    const bool activation = is_float && feeds[static_cast<std::size_t>(id)] && shape.rank() >= 2 &&
                            !ReachesGather(graph, id, GatherRole::kTable);
    const bool indices = !is_float && ReachesGather(graph, id, GatherRole::kIndices);
    if (!activation && !indices) continue;
    if (best == nullptr || (activation && !best_is_activation) ||
        (activation == best_is_activation && shape.rank() > best->type.shape.rank())) {
      best = &v;
      best_is_activation = activation;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->type.shape.dim(0).value();
}

// The batch: the static leading dim of the first input. An XLA program's first parameter is often
// a weight, so its batch is read off the parameter that carries the data (ProgramBatch); a rank-1
// input (a vector of features) has a batch dim only when --batch made it one.
void DecideBatch(const Graph& graph, const ShapeOptions& options, ModelFacts& facts) {
  if (facts.xla_program) {
    facts.batch = ProgramBatch(graph);
    if (facts.batch) facts.batch_source = BatchSource::kModel;
    return;
  }
  if (graph.inputs().empty()) return;
  const Shape& first = graph.value(graph.inputs()[0]).type.shape;
  if (!first.rank_known()) return;
  const bool own_batch = first.rank() == 0 || AddsOwnBatchDim(graph, graph.inputs()[0]);
  if (own_batch) {
    facts.batch = 1;
  } else if (first.dim(0).is_static()) {
    facts.batch = first.dim(0).value();
  } else {
    return;
  }
  // --batch set the leading dim when it is the batch (not when the model adds its own).
  const bool from_flag = !own_batch && options.batch == facts.batch;
  if (first.rank() == 1 && !from_flag) {
    facts.batch.reset();
    return;
  }
  facts.batch_source = from_flag ? BatchSource::kFlag : BatchSource::kModel;
}

// Fills the graph's ModelFacts from what the frontend reported; done once, here, for every format.
Result<LoadedModel> WithFacts(Result<LoadedModel> loaded, const ShapeOptions& options,
                              const std::string& name) {
  if (!loaded) return loaded;
  if (auto sizes = CheckTensorSizes(loaded->graph); !sizes)
    return MakeError(name + ": " + sizes.error().message);
  ModelFacts& facts = loaded->graph.mutable_facts();
  facts.format = loaded->format;
  facts.producer = loaded->producer;
  std::string version;
  if (const Framework f = FrameworkOfProducer(loaded->producer, version);
      f != Framework::kUnknown) {
    facts.framework = f;
    facts.framework_version = version;
  } else if (facts.framework == Framework::kUnknown) {
    if (loaded->format.starts_with("keras")) facts.framework = Framework::kKeras;
    if (loaded->format.starts_with("tf-")) facts.framework = Framework::kTensorFlow;
    if (loaded->format == "torch.export") facts.framework = Framework::kPyTorch;
  }
  DecideBatch(loaded->graph, options, facts);
  return loaded;
}

// The format an unambiguous file extension names, or nullopt when the name leaves it open (`.pb`
// is a TensorFlow GraphDef or, rarely, ONNX; `.json`/`.yml` a Keras or a model config; `.txt`
// anything). The extension is the user's word: a `.hlo` test file whose `// CHECK` comments quote
// MLIR is still HLO.
std::optional<std::string_view> FormatOfExtension(std::string_view name) {
  struct Ext {
    std::string_view suffix, format;
  };
  static constexpr Ext kExtensions[] = {
      {".hlo", "hlo"},    {".hlo.txt", "hlo"}, {".mlir", "stablehlo"}, {".mlirbc", "stablehlo"},
      {".onnx", "onnx"},  {".pt2", "pt2"},     {".keras", "keras"},    {".h5", "keras"},
      {".hdf5", "keras"}, {".pbtxt", "tf"},    {".meta", "tf"},
  };
  for (const Ext& e : kExtensions) {
    if (name.ends_with(e.suffix)) return e.format;
  }
  return std::nullopt;
}

Result<LoadedModel> LoadFormat(const Source& source, const ShapeOptions& options,
                               std::string_view format);

Result<LoadedModel> Detect(const Source& source, const ShapeOptions& options) {
  if (source.bytes.empty())
    return MakeError(source.display_name + ": file is empty, expected a model");
  // Not HLO text and not a GraphDef, whatever its extension (`.pbtxt`, `.txt`): say what it is.
  if (std::string proto = HloModuleProtoTextError(source); !proto.empty()) return MakeError(proto);
  if (auto format = FormatOfExtension(source.display_name))
    return LoadFormat(source, options, *format);
  if (LooksLikeZip(source.bytes)) return LoadArchive(source, options);
  if (SniffTorchExport(source) > 0) return LoadTorchExport(source, options);
  if (SniffModelConfig(source) > 0) return LoadModelConfig(source, options);
  if (SniffKeras(source) > 0) return LoadKeras(source, options);
  // A binary protobuf's first bytes do not say whether it is TensorFlow's: a weak guess is settled
  // by loading it (once), and a failure lets the other formats try.
  std::optional<Error> tf_error;
  if (const int tf = SniffTensorFlow(source); tf >= kSniffCertain) {
    return LoadTensorFlow(source, options);
  } else if (tf > 0) {
    auto loaded = LoadTensorFlow(source, options);
    if (loaded) return loaded;
    tf_error = loaded.error();
  }
  const int hlo = SniffHlo(source);
  const int onnx = SniffOnnx(source);
  const int mlir = SniffStableHlo(source);
  if (mlir > 0 && mlir > hlo && mlir >= onnx) return LoadStableHlo(source, options);
  if (hlo > 0 && hlo >= onnx) return LoadHlo(source, options);
  if (onnx > 0) return LoadOnnx(source, options);
  // Nothing recognised the bytes: let the format the name promises say what is wrong with them.
  if (source.display_name.ends_with(".pb") || source.display_name.ends_with(".pbtxt") ||
      source.display_name.ends_with(".meta")) {
    return tf_error ? Result<LoadedModel>(*tf_error) : LoadTensorFlow(source, options);
  }
  if (source.display_name.ends_with(".json")) return LoadKeras(source, options);
  return MakeError(
      source.display_name +
      ": not a model format tpu-doctor reads (expected ONNX .onnx, XLA HLO text, "
      "StableHLO/MHLO MLIR text, a torch.export .pt2, a Keras .keras/JSON config, a "
      "TensorFlow SavedModel/GraphDef, or a Hugging Face config.json / MaxText model YAML)");
}

Result<LoadedModel> LoadFormat(const Source& source, const ShapeOptions& options,
                               std::string_view format) {
  if (source.bytes.empty())
    return MakeError(source.display_name + ": file is empty, expected a model");
  if (format == "config") return LoadModelConfig(source, options);
  if (format == "onnx") return LoadOnnx(source, options);
  if (format == "hlo") return LoadHlo(source, options);
  if (format == "stablehlo") return LoadStableHlo(source, options);
  if (format == "pt2") return LoadTorchExport(source, options);
  if (format == "keras") return LoadKeras(source, options);
  if (format == "tf") return LoadTensorFlow(source, options);
  return MakeError("unknown input format `" + std::string(format) +
                   "`; expected one of config, hlo, keras, onnx, pt2, stablehlo, tf");
}

}  // namespace

namespace {
std::atomic<bool> child_processes_allowed{true};
}  // namespace

void SetChildProcessesAllowed(bool allowed) { child_processes_allowed = allowed; }
bool ChildProcessesAllowed() { return child_processes_allowed; }

const std::vector<std::string>& InputFormats() {
  static const auto* formats =
      new std::vector<std::string>{"config", "hlo", "keras", "onnx", "pt2", "stablehlo", "tf"};
  return *formats;
}

Result<LoadedModel> LoadModel(const Source& source, const ShapeOptions& options) {
  return WithFacts(Detect(source, options), options, source.display_name);
}

Result<LoadedModel> LoadModelAs(const Source& source, const ShapeOptions& options,
                                std::string_view format) {
  if (format.empty()) return LoadModel(source, options);
  return WithFacts(LoadFormat(source, options, format), options, source.display_name);
}

}  // namespace tpudoctor

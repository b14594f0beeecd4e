#include <google/protobuf/arena.h>
#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "src/frontends/onnx/onnx_file.h"
#include "src/frontends/onnx/shape_infer.h"
#include "src/frontends/with_op_support.h"
#include "tpudoctor/frontend/onnx.h"
#include "tpudoctor/ir/verify.h"
#include "tpudoctor/knowledge/onnx_ops.h"
#include "tpudoctor/knowledge/op_support.h"
#include "tpudoctor/support/string_view_map.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// The newest default-domain opset whose schemas the linked libonnx knows; ONNX shape inference
// is only trusted up to it (a newer opset's ops can change signature, e.g. Reduce* axes in 18).
constexpr int kOnnxInferenceMaxOpset = 17;
constexpr int kMaxKnownInts = 4096;
constexpr int kMaxSubgraphDepth = 64;
// What a file whose protobuf encoding is damaged gets (after its name).
constexpr std::string_view kNotOnnx = "not a valid ONNX protobuf (truncated or not an ONNX file)";

DType FromOnnx(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
      return DType::kFloat32;
    case onnx::TensorProto::UINT8:
      return DType::kUInt8;
    case onnx::TensorProto::INT8:
      return DType::kInt8;
    case onnx::TensorProto::UINT16:
      return DType::kUInt16;
    case onnx::TensorProto::INT16:
      return DType::kInt16;
    case onnx::TensorProto::INT32:
      return DType::kInt32;
    case onnx::TensorProto::INT64:
      return DType::kInt64;
    case onnx::TensorProto::STRING:
      return DType::kString;
    case onnx::TensorProto::BOOL:
      return DType::kBool;
    case onnx::TensorProto::FLOAT16:
      return DType::kFloat16;
    case onnx::TensorProto::DOUBLE:
      return DType::kFloat64;
    case onnx::TensorProto::UINT32:
      return DType::kUInt32;
    case onnx::TensorProto::UINT64:
      return DType::kUInt64;
    case onnx::TensorProto::COMPLEX64:
      return DType::kComplex64;
    case onnx::TensorProto::COMPLEX128:
      return DType::kComplex128;
    case onnx::TensorProto::BFLOAT16:
      return DType::kBFloat16;
    // Newer than libonnx 1.12's enum; numbers from onnx.proto.
    case 17:
      return DType::kFloat8E4M3FN;
    case 18:
      return DType::kFloat8E4M3FNUZ;
    case 19:
      return DType::kFloat8E5M2;
    case 20:
      return DType::kFloat8E5M2FNUZ;
    case 21:
      return DType::kUInt4;
    case 22:
      return DType::kInt4;
    case 23:
      return DType::kFloat4E2M1;
    default:
      return DType::kUnknown;
  }
}

Shape FromOnnx(const onnx::TensorShapeProto& proto) {
  std::vector<Dim> dims;
  dims.reserve(static_cast<std::size_t>(proto.dim_size()));
  for (const auto& d : proto.dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      dims.push_back(Dim::Static(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      dims.push_back(Dim::Symbol(d.dim_param()));
    } else {
      dims.push_back(Dim::Unknown());
    }
  }
  return Shape(std::move(dims));
}

TensorType FromOnnx(const onnx::TypeProto& proto, int depth = 0) {
  TensorType t;
  if (depth > 16) return {ValueKind::kUnknown, DType::kUnknown, Shape()};
  switch (proto.value_case()) {
    case onnx::TypeProto::kTensorType:
      t.dtype = FromOnnx(proto.tensor_type().elem_type());
      if (proto.tensor_type().has_shape()) t.shape = FromOnnx(proto.tensor_type().shape());
      return t;
    case onnx::TypeProto::kSparseTensorType:
      t.dtype = FromOnnx(proto.sparse_tensor_type().elem_type());
      if (proto.sparse_tensor_type().has_shape())
        t.shape = FromOnnx(proto.sparse_tensor_type().shape());
      return t;
    case onnx::TypeProto::kSequenceType: {
      TensorType elem = FromOnnx(proto.sequence_type().elem_type(), depth + 1);
      return {ValueKind::kSequence, elem.dtype, elem.shape};
    }
    case onnx::TypeProto::kOptionalType: {
      TensorType elem = FromOnnx(proto.optional_type().elem_type(), depth + 1);
      return {ValueKind::kOptional, elem.dtype, elem.shape};
    }
    case onnx::TypeProto::kMapType:
      return {ValueKind::kMap, FromOnnx(proto.map_type().key_type()), Shape()};
    default:
      return {ValueKind::kUnknown, DType::kUnknown, Shape()};
  }
}

TensorType FromOnnxTensor(const onnx::TensorProto& t) {
  std::vector<Dim> dims;
  for (std::int64_t d : t.dims()) dims.push_back(d >= 0 ? Dim::Static(d) : Dim::Unknown());
  return {ValueKind::kTensor, FromOnnx(t.data_type()), Shape(std::move(dims))};
}

// The elements of a small integer tensor whose data is inside the model file.
std::optional<std::vector<Dim>> KnownInts(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::vector<Dim> out;
  const bool is64 = t.data_type() == onnx::TensorProto::INT64;
  const bool is32 = t.data_type() == onnx::TensorProto::INT32;
  if (!is64 && !is32) return std::nullopt;
  if (!t.raw_data().empty()) {
    const std::size_t width = is64 ? 8 : 4;
    const std::string& raw = t.raw_data();
    if (raw.size() % width != 0 || raw.size() / width > kMaxKnownInts) return std::nullopt;
    for (std::size_t off = 0; off < raw.size(); off += width) {
      if (is64) {
        std::int64_t v = 0;
        std::memcpy(&v, raw.data() + off, 8);
        out.push_back(Dim::Static(v));
      } else {
        std::int32_t v = 0;
        std::memcpy(&v, raw.data() + off, 4);
        out.push_back(Dim::Static(v));
      }
    }
  } else if (is64) {
    if (t.int64_data_size() > kMaxKnownInts) return std::nullopt;
    for (std::int64_t v : t.int64_data()) out.push_back(Dim::Static(v));
  } else {
    if (t.int32_data_size() > kMaxKnownInts) return std::nullopt;
    for (std::int32_t v : t.int32_data()) out.push_back(Dim::Static(v));
  }
  // The element count must match the declared dims, or the data is not what it claims.
  std::int64_t count = 1;
  for (std::int64_t d : t.dims()) {
    auto next = CheckedMul(count, d);
    if (!next) return std::nullopt;
    count = *next;
  }
  if (count != static_cast<std::int64_t>(out.size())) return std::nullopt;
  return out;
}

// Every graph of the model: the main graph, then the subgraphs (If/Loop/Scan bodies) in the
// order a depth-first walk meets them. One walk over the nodes also checks every external-data
// location of the model's tensors (the files are never opened), so the passes that rewrite
// declared shapes visit the graphs without walking every node's attributes again.
using GraphList = std::vector<onnx::GraphProto*>;
using onnx_frontend::EncodedNode;
using onnx_frontend::OnnxFile;
using onnx_frontend::ParseTopLevel;
using onnx_frontend::SplitOnnxFile;

Result<Ok> CheckExternalLocation(const onnx::TensorProto& t) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL) return Ok{};
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location" && !IsSafeRelativePath(kv.value())) {
      return MakeError("initializer `" + t.name() + "` has external data at `" + kv.value() +
                       "`, outside the model's folder; refusing to follow it");
    }
  }
  return Ok{};
}

Result<Ok> CollectGraphs(onnx::GraphProto& g, int depth, GraphList& graphs);

// Checks the external-data locations of a node's tensor attributes and collects the subgraphs it
// calls (a node of a graph at `depth`).
Result<Ok> CollectNodeGraphs(onnx::NodeProto& n, int depth, GraphList& graphs) {
  for (auto& a : *n.mutable_attribute()) {
    if (a.has_t()) {
      if (auto r = CheckExternalLocation(a.t()); !r) return r.error();
    }
    if (a.has_g()) {
      if (auto r = CollectGraphs(*a.mutable_g(), depth + 1, graphs); !r) return r.error();
    }
    for (auto& sub : *a.mutable_graphs()) {
      if (auto r = CollectGraphs(sub, depth + 1, graphs); !r) return r.error();
    }
  }
  return Ok{};
}

Result<Ok> CollectGraphs(onnx::GraphProto& g, int depth, GraphList& graphs) {
  if (depth > kMaxSubgraphDepth) return MakeError("subgraphs are nested more than 64 deep");
  graphs.push_back(&g);
  for (const auto& t : g.initializer()) {
    if (auto r = CheckExternalLocation(t); !r) return r.error();
  }
  for (auto& n : *g.mutable_node()) {
    if (auto r = CollectNodeGraphs(n, depth, graphs); !r) return r.error();
  }
  return Ok{};
}

bool CallsSubgraphs(const onnx::NodeProto& n) {
  return std::any_of(n.attribute().begin(), n.attribute().end(),
                     [](const auto& a) { return a.has_g() || a.graphs_size() > 0; });
}

// What the builder needs of an initializer: weights are never read.
struct InitializerFacts {
  std::string name;
  TensorType type;
  std::optional<std::vector<Dim>> known_ints;
};

InitializerFacts FactsOf(const onnx::TensorProto& t) {
  return {t.name(), FromOnnxTensor(t), KnownInts(t)};
}

std::vector<InitializerFacts> FactsOf(const onnx::GraphProto& g) {
  std::vector<InitializerFacts> facts;
  facts.reserve(static_cast<std::size_t>(g.initializer_size()));
  for (const auto& t : g.initializer()) facts.push_back(FactsOf(t));
  return facts;
}

std::optional<std::string> NegativeDim(const onnx::TensorProto& t) {
  for (std::int64_t d : t.dims()) {
    if (d < 0) {
      return "initializer `" + t.name() + "` has dim " + std::to_string(d) +
             "; expected sizes >= 0";
    }
  }
  return std::nullopt;
}

// The top-level graph of a split file after one pass over its initializers and the nodes whose
// attributes hold tensors or subgraphs, each parsed once: what the builder needs of the
// initializers, the nodes that call subgraphs (kept, since --dim/--batch rewrite their subgraphs'
// declared shapes), every graph of the model, and the first problem the checks of loading found,
// in the order a walk of the whole model meets them.
struct TopLevel {
  std::vector<InitializerFacts> initializers;
  std::map<int, onnx::NodeProto> kept;
  GraphList graphs;                         // the top-level graph first, then subgraphs depth-first
  std::optional<Error> graph_error;         // a nesting or external-data problem
  std::optional<std::string> negative_dim;  // an initializer with a negative dim
};

// Fills `top`; false when an initializer or a node it parses is not a valid protobuf message. `top`
// must stay where it is: `graphs` points into its kept nodes.
bool ReadTopLevel(OnnxFile& file, TopLevel& top) {
  top.graphs.push_back(file.model.mutable_graph());
  auto note = [&](Result<Ok> r) {
    if (!r && !top.graph_error) top.graph_error = r.error();
  };
  onnx::TensorProto tensor;
  top.initializers.reserve(file.initializers.size());
  for (std::string_view bytes : file.initializers) {
    if (!ParseTopLevel(bytes, tensor)) return false;
    note(CheckExternalLocation(tensor));
    if (!top.negative_dim) top.negative_dim = NegativeDim(tensor);
    top.initializers.push_back(FactsOf(tensor));
  }
  onnx::NodeProto node;
  for (std::size_t i = 0; i < file.nodes.size(); ++i) {
    if (!file.nodes[i].has_tensor_or_graph) continue;
    if (!ParseTopLevel(file.nodes[i].bytes, node)) return false;
    if (top.graph_error) continue;
    if (!CallsSubgraphs(node)) {
      for (const auto& a : node.attribute()) {
        if (a.has_t()) note(CheckExternalLocation(a.t()));
      }
      continue;
    }
    onnx::NodeProto& kept = top.kept[static_cast<int>(i)];
    kept.Swap(&node);
    note(CollectNodeGraphs(kept, 0, top.graphs));
  }
  return true;
}

// ---- Making dims static (--dim / --batch) ----

// Calls fn on every declared input, output and value_info of every graph.
template <typename Fn>
void ForEachValueInfo(const GraphList& graphs, Fn&& fn) {
  for (onnx::GraphProto* g : graphs) {
    for (auto& v : *g->mutable_input()) fn(v);
    for (auto& v : *g->mutable_output()) fn(v);
    for (auto& v : *g->mutable_value_info()) fn(v);
  }
}

onnx::TensorShapeProto* MutableShape(onnx::ValueInfoProto& v) {
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return nullptr;
  return v.mutable_type()->mutable_tensor_type()->mutable_shape();
}

std::set<std::string> InitializerNames(const std::vector<InitializerFacts>& initializers) {
  std::set<std::string> names;
  for (const InitializerFacts& t : initializers) names.insert(t.name);
  return names;
}

void CollectSymbols(const GraphList& graphs, std::set<std::string>& symbols) {
  ForEachValueInfo(graphs, [&](onnx::ValueInfoProto& v) {
    if (auto* s = MutableShape(v)) {
      for (const auto& d : s->dim()) {
        if (d.has_dim_param() && !d.dim_param().empty()) symbols.insert(d.dim_param());
      }
    }
  });
}

// Symbolic dims of the graph inputs, in order of first appearance.
std::vector<std::string> InputSymbols(const onnx::GraphProto& g) {
  std::vector<std::string> out;
  for (const auto& in : g.input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      if (d.has_dim_param() && !d.dim_param().empty() &&
          std::find(out.begin(), out.end(), d.dim_param()) == out.end()) {
        out.push_back(d.dim_param());
      }
    }
  }
  return out;
}

// A declared dim is a size (>= 0) or a name; ONNX writes an unknown dim as one with neither. A
// negative value is a damaged file (or one written by a tool that took TensorFlow's -1 for ONNX's
// way of saying unknown): an input error, never silently an unknown dim.
Result<Ok> CheckDeclaredDims(const TopLevel& top) {
  std::string bad;
  ForEachValueInfo(top.graphs, [&](onnx::ValueInfoProto& v) {
    const onnx::TensorShapeProto* shape = MutableShape(v);
    if (shape == nullptr || !bad.empty()) return;
    for (int i = 0; i < shape->dim_size(); ++i) {
      const auto& d = shape->dim(i);
      if (d.has_dim_value() && d.dim_value() < 0) {
        bad = "dim " + std::to_string(i) + " of `" + v.name() + "` is " +
              std::to_string(d.dim_value()) +
              "; expected a size >= 0 (an unknown dim has no value, or a name)";
        return;
      }
    }
  });
  if (!bad.empty()) return MakeError(bad);
  if (top.negative_dim) return MakeError(*top.negative_dim);
  return Ok{};
}

struct StaticizeResult {
  bool replaced_static_batch = false;
};

Result<StaticizeResult> ApplyShapeOptions(onnx::ModelProto& model, const TopLevel& top,
                                          const ShapeOptions& options,
                                          std::vector<std::string>& notes) {
  StaticizeResult result;
  onnx::GraphProto& g = *model.mutable_graph();
  std::map<std::string, std::int64_t> dims = options.dims;
  std::set<std::string> symbols;
  CollectSymbols(top.graphs, symbols);
  for (const auto& [name, value] : options.dims) {
    if (!symbols.count(name)) {
      std::string known;
      for (const auto& s : InputSymbols(g)) known += (known.empty() ? "" : ", ") + s;
      return MakeError(
          "--dim " + name + "=" + std::to_string(value) + ": the model has no dim named `" + name +
          "`" +
          (known.empty() ? " (it has no symbolic dims)" : "; its symbolic dims are: " + known));
    }
  }
  if (options.batch) {
    const std::int64_t batch = *options.batch;
    const auto inits = InitializerNames(top.initializers);
    for (auto& in : *g.mutable_input()) {
      if (inits.count(in.name())) continue;
      auto* shape = MutableShape(in);
      if (shape == nullptr || shape->dim_size() == 0) continue;
      auto* d0 = shape->mutable_dim(0);
      if (d0->has_dim_param() && !d0->dim_param().empty()) {
        if (!dims.count(d0->dim_param())) dims[d0->dim_param()] = batch;
      } else if (d0->has_dim_value() && d0->dim_value() == 1 && batch != 1) {
        d0->set_dim_value(batch);
        result.replaced_static_batch = true;
        notes.push_back("input `" + in.name() +
                        "` was exported with a static batch of 1; --batch " +
                        std::to_string(batch) +
                        " replaced it, and shapes were re-derived from the inputs "
                        "(re-export with a dynamic batch dim for exact shapes)");
      } else if (d0->has_dim_value() && d0->dim_value() != batch) {
        notes.push_back("input `" + in.name() + "` has a static leading dim of " +
                        std::to_string(d0->dim_value()) +
                        ", which is not a batch dim of 1 or a symbol; "
                        "--batch left it as it is");
      }
    }
  }
  for (const auto& [name, value] : dims) {
    notes.push_back("dim `" + name + "` = " + std::to_string(value));
  }
  ForEachValueInfo(top.graphs, [&](onnx::ValueInfoProto& v) {
    auto* s = MutableShape(v);
    if (s == nullptr) return;
    for (auto& d : *s->mutable_dim()) {
      if (!d.has_dim_param()) continue;
      auto it = dims.find(d.dim_param());
      if (it != dims.end()) d.set_dim_value(it->second);
    }
  });
  if (result.replaced_static_batch) {
    // The exporter's intermediate shapes were for batch 1: forget them and derive them again.
    g.clear_value_info();
    for (auto& out : *g.mutable_output()) {
      if (auto* s = MutableShape(out)) s->clear_dim();
      if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
    }
  }
  return result;
}

int DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return static_cast<int>(o.version());
  }
  return 0;
}

// libonnx's shape inference trusts what the ONNX spec promises: nodes in topological order, each
// value defined once; on other graphs its results mean nothing (and its data propagation
// crashed on one: the typed-values guard below is what keeps it from crashing). tpu-doctor's own
// builder orders nodes itself; libonnx is handed a graph only when every graph and subgraph keeps
// the promise. `visible` holds the names of the enclosing
// scopes defined so far.
bool InOnnxOrder(const onnx::GraphProto& g, std::vector<std::string>& visible, int depth = 0) {
  if (depth > kMaxSubgraphDepth) return false;
  const std::size_t outer = visible.size();
  std::unordered_set<std::string_view> defined;
  auto define = [&](const std::string& name) {
    if (name.empty()) return true;
    visible.push_back(name);
    return defined.insert(name).second;
  };
  auto known = [&](const std::string& name) {
    return name.empty() || defined.contains(name) ||
           std::find(visible.begin(), visible.begin() + static_cast<std::ptrdiff_t>(outer), name) !=
               visible.begin() + static_cast<std::ptrdiff_t>(outer);
  };
  bool ok = true;
  for (const auto& v : g.input()) define(v.name());
  for (const auto& t : g.initializer()) define(t.name());
  for (const auto& t : g.sparse_initializer()) define(t.values().name());
  for (const auto& n : g.node()) {
    for (const std::string& in : n.input()) ok = ok && known(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) ok = ok && InOnnxOrder(a.g(), visible, depth + 1);
      for (const auto& sub : a.graphs()) ok = ok && InOnnxOrder(sub, visible, depth + 1);
    }
    for (const std::string& out : n.output()) ok = ok && define(out);
    if (!ok) break;
  }
  visible.resize(outer);
  return ok;
}

// The LOAD001 note for when libonnx's shape inference did not run to the end.
Diagnostic ShapeInferenceNote(std::string why, std::string onnx_said = "") {
  Diagnostic d;
  d.code = "LOAD001";
  d.severity = Severity::kNote;
  d.message = why + "; shapes come from the exporter and tpu-doctor's own propagation";
  if (!onnx_said.empty()) d.notes.push_back("onnx said: " + onnx_said);
  return d;
}

// Whether every node output of `g` and its subgraphs has a type (in value_info, the outputs or the
// inputs) after a first inference pass.
bool EveryNodeOutputTyped(const onnx::GraphProto& g, int depth = 0) {
  if (depth > kMaxSubgraphDepth) return false;
  std::unordered_set<std::string_view> typed;
  auto add = [&](const onnx::ValueInfoProto& v) {
    if (v.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) typed.insert(v.name());
  };
  for (const auto& v : g.input()) add(v);
  for (const auto& v : g.output()) add(v);
  for (const auto& v : g.value_info()) add(v);
  for (const auto& n : g.node()) {
    for (const std::string& out : n.output()) {
      if (!out.empty() && !typed.contains(out)) return false;
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g() && !EveryNodeOutputTyped(a.g(), depth + 1)) return false;
      for (const auto& sub : a.graphs()) {
        if (!EveryNodeOutputTyped(sub, depth + 1)) return false;
      }
    }
  }
  return true;
}

// Returns whether the model was changed (inference ran and added facts).
bool RunOnnxShapeInference(onnx::ModelProto& model, std::vector<Diagnostic>& diags) {
  const int opset = DefaultOpset(model);
  if (opset > kOnnxInferenceMaxOpset) return false;  // rely on value_info + own propagation
  std::vector<std::string> visible;
  if (!InOnnxOrder(model.graph(), visible)) {
    diags.push_back(ShapeInferenceNote(
        "nodes are not in the topological order ONNX requires (or a value is defined twice)"));
    return false;
  }
  // libonnx's data propagation (shape values through Shape -> Gather -> Concat -> Reshape)
  // dereferences the type of every input without checking it, and a node whose inference failed
  // (error_mode 0 goes on) leaves its outputs untyped: a first pass without data propagation is
  // safe, and the second, with it, runs only once every value has a type.
  try {
    const onnx::ShapeInferenceOptions types_only(/*check_type=*/false, /*error_mode=*/0,
                                                 /*data_prop=*/false);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), types_only);
    if (!EveryNodeOutputTyped(model.graph())) return true;
    const onnx::ShapeInferenceOptions with_data(/*check_type=*/false, /*error_mode=*/0,
                                                /*data_prop=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), with_data);
    return true;
  } catch (const std::exception& e) {
    diags.push_back(ShapeInferenceNote("onnx shape inference stopped early", e.what()));
  }
  return false;
}

// ---- Building the IR ----

AttrValue ToAttrValue(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      return a.i();
    case onnx::AttributeProto::FLOAT:
      return static_cast<double>(a.f());
    case onnx::AttributeProto::STRING:
      return a.s();
    case onnx::AttributeProto::INTS:
      return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto::FLOATS:
      return std::vector<double>(a.floats().begin(), a.floats().end());
    case onnx::AttributeProto::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    default:
      return std::string();
  }
}

bool IsPlainAttr(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT:
    case onnx::AttributeProto::FLOAT:
    case onnx::AttributeProto::STRING:
    case onnx::AttributeProto::INTS:
    case onnx::AttributeProto::FLOATS:
    case onnx::AttributeProto::STRINGS:
      return true;
    default:
      return false;
  }
}

// The module path torch.onnx's dynamo exporter records as a node's name scopes, in the form the
// TorchScript exporter writes into node names: ['', 'model', 'model.layers.0',
// 'model.layers.0.mlp', 'linear'] (the modules that called the op, then the op) is
// "/model/layers.0/mlp". Empty when the list is not of that form.
std::string ScopeFromNameScopes(std::string_view list) {
  std::vector<std::string> paths;
  for (std::size_t at = list.find('\''); at != std::string_view::npos;) {
    const std::size_t end = list.find('\'', at + 1);
    if (end == std::string_view::npos) return "";
    paths.emplace_back(list.substr(at + 1, end - at - 1));
    at = list.find('\'', end + 1);
  }
  if (paths.size() < 2) return "";
  paths.pop_back();  // the op itself
  std::string scope, previous;
  for (const std::string& path : paths) {
    if (path.empty()) continue;
    const bool nested = !previous.empty() && path.starts_with(previous + ".");
    scope += "/" + (nested ? path.substr(previous.size() + 1) : path);
    previous = path;
  }
  return scope;
}

// The innermost frame of the model's own code in a recorded Python stack trace
// (`File "model.py", line 42, in forward`): not generated code (`<eval_with_key>.3`) or torch's.
void SetSourceFrame(std::string_view trace, SourceLoc& loc) {
  constexpr std::string_view kFile = "File \"";
  for (std::size_t at = trace.find(kFile); at != std::string_view::npos;
       at = trace.find(kFile, at + 1)) {
    const std::size_t start = at + kFile.size();
    const std::size_t quote = trace.find('"', start);
    if (quote == std::string_view::npos) return;
    const std::string_view file = trace.substr(start, quote - start);
    constexpr std::string_view kLine = ", line ";
    if (file.empty() || file.front() == '<' || file.find("/torch/") != std::string_view::npos ||
        trace.substr(quote + 1, kLine.size()) != kLine)
      continue;
    const std::size_t digits = quote + 1 + kLine.size();
    const std::size_t digits_end =
        std::min(trace.find_first_not_of("0123456789", digits), trace.size());
    const auto line = ParseInt64(trace.substr(digits, digits_end - digits));
    if (!line || *line <= 0 || *line > INT_MAX) continue;
    loc.file = std::string(file);
    loc.line = static_cast<int>(*line);
  }
}

// torch.onnx.export(..., verbose=True) (the TorchScript exporter) writes each node's Python stack
// into its doc_string, innermost frame first: `/path/model.py(8): forward`. The first frame outside
// PyTorch's own package is the model's line.
void SetDocStringFrame(std::string_view doc, SourceLoc& loc) {
  for (std::string_view frame : SplitLines(doc)) {
    const std::size_t close = frame.find("): ");
    const std::size_t open = close == std::string_view::npos ? close : frame.rfind('(', close);
    if (open == std::string_view::npos || open == 0) continue;
    const std::string_view file = frame.substr(0, open);
    if (file.front() == '<' || file.find("/torch/") != std::string_view::npos) continue;
    const auto line = ParseInt64(frame.substr(open + 1, close - open - 1));
    if (!line || *line <= 0 || *line > INT_MAX) continue;
    loc.file = std::string(file);
    loc.line = static_cast<int>(*line);
    return;
  }
}

// What torch.onnx's dynamo exporter records of each node in NodeProto.metadata_props (field 9
// since ONNX 1.16; this libonnx keeps it as unknown bytes): the module path that called the op,
// when the node's name does not carry one, and the model code's line. `entry` is the caller's,
// reused from node to node so its strings keep their capacity: a dynamo export has a few per node.
void ReadExporterMetadata(const onnx::NodeProto& proto, SourceLoc& loc,
                          onnx::StringStringEntryProto& entry) {
  const auto& unknown = proto.unknown_fields();  // not through reflection: no descriptors built
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& field = unknown.field(i);
    if (field.number() != 9 ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    if (!entry.ParseFromString(field.length_delimited())) continue;
    if (entry.key() == "pkg.torch.onnx.name_scopes" && loc.scope.empty()) {
      loc.scope = ScopeFromNameScopes(entry.value());
    } else if (entry.key() == "pkg.torch.onnx.stack_trace") {
      SetSourceFrame(entry.value(), loc);
    }
  }
}

// The nodes of one graph, as the builder reads them: from a parsed GraphProto, or one at a time
// from the bytes of a split file's top-level graph.
class NodeSource {
 public:
  // How many nodes ahead the builder looks (it prefetches the name-index slots of the names it
  // will look up: a large graph's index is megabytes, and each lookup is otherwise a cache miss).
  static constexpr int kLookAhead = 8;

  virtual ~NodeSource() = default;
  virtual int size() const = 0;
  virtual std::size_t output_count() const = 0;  // of all nodes, named or not
  virtual std::span<const std::string_view> outputs(int i) const = 0;
  // The i-th node, null where its bytes are not a NodeProto; it stays valid until a node more
  // than kLookAhead past it is asked for.
  virtual const onnx::NodeProto* at(int i) = 0;
};

class ProtoNodes final : public NodeSource {
 public:
  explicit ProtoNodes(const onnx::GraphProto& g) : g_(g) {
    first_output_.reserve(static_cast<std::size_t>(g.node_size()) + 1);
    for (const auto& n : g.node()) {
      outputs_.insert(outputs_.end(), n.output().begin(), n.output().end());
      first_output_.push_back(outputs_.size());
    }
  }
  int size() const override { return g_.node_size(); }
  std::size_t output_count() const override { return outputs_.size(); }
  std::span<const std::string_view> outputs(int i) const override {
    const auto at = static_cast<std::size_t>(i);
    return std::span(outputs_).subspan(first_output_[at],
                                       first_output_[at + 1] - first_output_[at]);
  }
  const onnx::NodeProto* at(int i) override { return &g_.node(i); }

 private:
  const onnx::GraphProto& g_;
  std::vector<std::string_view> outputs_;        // every node's outputs, in order
  std::vector<std::size_t> first_output_ = {0};  // node i's are [first_output_[i], [i + 1])
};

// Parses each node into one of kLookAhead + 1 reused messages; the kept ones are parsed already.
class FileNodes final : public NodeSource {
 public:
  FileNodes(const OnnxFile& file, const TopLevel& top) : file_(file), top_(top) {}
  int size() const override { return static_cast<int>(file_.nodes.size()); }
  std::size_t output_count() const override { return file_.outputs.size(); }
  std::span<const std::string_view> outputs(int i) const override {
    const EncodedNode& n = file_.nodes[static_cast<std::size_t>(i)];
    return std::span(file_.outputs).subspan(n.first_output, n.outputs);
  }
  const onnx::NodeProto* at(int i) override {
    if (auto kept = top_.kept.find(i); kept != top_.kept.end()) return &kept->second;
    Slot& slot = ring_[static_cast<std::size_t>(i) % ring_.size()];
    if (slot.index != i) {
      slot.index = i;
      slot.parsed = ParseTopLevel(file_.nodes[static_cast<std::size_t>(i)].bytes, slot.node);
    }
    return slot.parsed ? &slot.node : nullptr;
  }

 private:
  struct Slot {
    int index = -1;
    bool parsed = false;
    onnx::NodeProto node;
  };
  const OnnxFile& file_;
  const TopLevel& top_;
  std::array<Slot, kLookAhead + 1> ring_;
};

// What the builder reads of one graph.
struct GraphView {
  const onnx::GraphProto& fields;  // its name, inputs, outputs, value_info, sparse initializers
  const std::vector<InitializerFacts>& initializers;
  NodeSource& nodes;
};

// Calls `use` with the view of a graph parsed whole.
template <typename Use>
auto WithView(const onnx::GraphProto& proto, Use&& use) {
  const std::vector<InitializerFacts> initializers = FactsOf(proto);
  ProtoNodes nodes(proto);
  return use(GraphView{proto, initializers, nodes});
}

class GraphBuilder {
 public:
  GraphBuilder(std::vector<Diagnostic>& diags) : diags_(diags) {}

  // A graph parsed whole (a subgraph, or a model after libonnx's shape inference).
  Result<Graph> Build(const onnx::GraphProto& proto, const std::string& name,
                      std::vector<const Graph*>& scopes, int depth) {
    return WithView(proto, [&](const GraphView& view) { return Build(view, name, scopes, depth); });
  }

  Result<Graph> Build(const GraphView& view, const std::string& name,
                      std::vector<const Graph*>& scopes, int depth) {
    if (depth > kMaxSubgraphDepth) return MakeError("subgraphs are nested more than 64 deep");
    const onnx::GraphProto& proto = view.fields;
    NodeSource& nodes = view.nodes;
    Graph g(name);
    const std::size_t outputs = nodes.output_count();
    g.Reserve(outputs + view.initializers.size() + static_cast<std::size_t>(proto.input_size()),
              static_cast<std::size_t>(nodes.size()));
    StringViewMap<const onnx::ValueInfoProto*> info(
        static_cast<std::size_t>(proto.value_info_size() + proto.output_size()));
    for (const auto& v : proto.value_info()) info[v.name()] = &v;
    for (const auto& v : proto.output()) info[v.name()] = &v;
    auto type_of = [&](std::string_view value_name) -> TensorType {
      const onnx::ValueInfoProto* const* found = info.Find(value_name);
      if (found == nullptr || !(*found)->has_type())
        return {ValueKind::kTensor, DType::kUnknown, Shape()};
      return FromOnnx((*found)->type());
    };

    std::set<std::string> init_names;
    for (const InitializerFacts& t : view.initializers) {
      const std::optional<ValueId> id = g.AddNewValue(t.name, t.type, ValueOrigin::kInitializer);
      if (!id) return MakeError("initializer `" + t.name + "` is defined twice");
      g.mutable_value(*id).known_ints = t.known_ints;
      init_names.insert(t.name);
    }
    for (const auto& t : proto.sparse_initializer()) {
      if (g.FindValue(t.values().name())) continue;
      TensorType type = FromOnnxTensor(t.values());
      type.shape = Shape::OfStatic(std::vector<std::int64_t>(t.dims().begin(), t.dims().end()));
      g.AddValue(t.values().name(), type, ValueOrigin::kInitializer);
    }
    for (const auto& in : proto.input()) {
      if (init_names.count(in.name())) continue;  // IR < 4 lists initializers as inputs too
      const std::optional<ValueId> id =
          g.AddNewValue(in.name(), FromOnnx(in.type()), ValueOrigin::kGraphInput);
      if (!id) return MakeError("graph input `" + in.name() + "` is defined twice");
      g.AddInput(*id);
    }
    // Declare every node output first, so a file whose nodes are out of order still links.
    std::vector<ValueId> declared;  // the named outputs of every node, in node order
    declared.reserve(outputs);
    for (int i = 0; i < nodes.size(); ++i) {
      if (i + NodeSource::kLookAhead < nodes.size()) {
        for (std::string_view out : nodes.outputs(i + NodeSource::kLookAhead)) g.PrefetchName(out);
      }
      for (std::string_view out : nodes.outputs(i)) {
        if (out.empty()) continue;
        const std::optional<ValueId> id =
            g.AddNewValue(std::string(out), type_of(out), ValueOrigin::kNodeOutput);
        if (!id) {
          const onnx::NodeProto* n = nodes.at(i);
          if (n == nullptr) return MakeError(std::string(kNotOnnx));
          return MakeError("value `" + std::string(out) + "` is produced twice (node `" +
                           n->name() + "`)");
        }
        declared.push_back(*id);
      }
    }
    scopes.push_back(&g);
    const ValueId* next_declared = declared.data();
    for (int i = 0; i < nodes.size(); ++i) {
      const onnx::NodeProto* ahead = i + NodeSource::kLookAhead < nodes.size()
                                         ? nodes.at(i + NodeSource::kLookAhead)
                                         : nullptr;
      if (ahead != nullptr) {
        for (const auto& in : ahead->input()) g.PrefetchName(in);
      }
      const onnx::NodeProto* n = nodes.at(i);
      auto r = n == nullptr ? Result<Ok>(MakeError(std::string(kNotOnnx)))
                            : AddNode(g, *n, i, next_declared, scopes, depth);
      if (!r) {
        scopes.pop_back();
        return r.error();
      }
    }
    scopes.pop_back();
    for (const auto& out : proto.output()) {
      auto id = g.FindValue(out.name());
      if (!id) id = Capture(g, out.name(), scopes);
      if (!id) return MakeError("graph output `" + out.name() + "` is not produced by any node");
      g.AddOutput(*id);
    }
    if (auto fin = g.Finalize(); !fin) return fin.error();
    return g;
  }

 private:
  // Finds `value_name` in the enclosing graphs and declares it here as a captured value.
  std::optional<ValueId> Capture(Graph& g, const std::string& value_name,
                                 const std::vector<const Graph*>& scopes) {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      if (*it == &g) continue;
      auto outer = (*it)->FindValue(value_name);
      if (!outer) continue;
      const Value& ov = (*it)->value(*outer);
      ValueId id = g.AddValue(value_name, ov.type, ValueOrigin::kCaptured);
      g.mutable_value(id).known_ints = ov.known_ints;
      return id;
    }
    return std::nullopt;
  }

  // `declared` points at the node's first named output, declared by Build; moved past its outputs.
  Result<Ok> AddNode(Graph& g, const onnx::NodeProto& proto, int index, const ValueId*& declared,
                     std::vector<const Graph*>& scopes, int depth) {
    Node& n = g.NewNode();  // g's nodes are reserved: subgraphs built below do not move it
    n.name = proto.name().empty() ? proto.op_type() + "_" + std::to_string(index) : proto.name();
    n.domain = proto.domain() == "ai.onnx" ? "" : proto.domain();
    n.op_type = proto.op_type();
    n.kind = ops_.Get(n.domain, n.op_type).kind;
    if (auto slash = proto.name().rfind('/'); slash != std::string::npos && slash > 0) {
      n.loc.scope = proto.name().substr(0, slash);
    }
    ReadExporterMetadata(proto, n.loc, metadata_entry_);
    if (n.loc.file.empty() && !proto.doc_string().empty())
      SetDocStringFrame(proto.doc_string(), n.loc);
    for (const auto& in : proto.input()) {
      if (in.empty()) {
        n.inputs.push_back(kNoValue);
        continue;
      }
      auto id = g.FindValue(in);
      if (!id) id = Capture(g, in, scopes);
      if (!id)
        return MakeError("node `" + n.name + "` reads `" + in +
                         "`, which no node, input or initializer defines");
      n.inputs.push_back(*id);
    }
    for (const auto& out : proto.output()) {
      if (out.empty()) {
        n.outputs.push_back(g.AddValue("", {ValueKind::kTensor, DType::kUnknown, Shape()},
                                       ValueOrigin::kNodeOutput));
        continue;
      }
      n.outputs.push_back(*declared++);
    }
    for (const auto& a : proto.attribute()) {
      if (IsPlainAttr(a)) {
        n.attrs.push_back({a.name(), ToAttrValue(a)});
      } else if (a.type() == onnx::AttributeProto::TENSOR || a.has_t()) {
        AddTensorAttr(g, n, a);
      } else if (a.has_g()) {
        auto sub = Build(a.g(), n.name + "." + a.name(), scopes, depth + 1);
        if (!sub) return sub.error();
        n.subgraphs.push_back({a.name(), std::make_unique<Graph>(std::move(*sub))});
      } else if (a.graphs_size() > 0) {
        for (int i = 0; i < a.graphs_size(); ++i) {
          auto sub =
              Build(a.graphs(i), n.name + "." + a.name() + std::to_string(i), scopes, depth + 1);
          if (!sub) return sub.error();
          n.subgraphs.push_back({a.name(), std::make_unique<Graph>(std::move(*sub))});
        }
      }
    }
    ApplyTypeAttrs(g, n, proto);
    return Ok{};
  }

  // Constant's `value` and ConstantOfShape's `value` carry their output's dtype (and for
  // Constant the shape and, for small ints, the contents).
  void AddTensorAttr(Graph& g, Node& n, const onnx::AttributeProto& a) {
    const onnx::TensorProto& t = a.t();
    if (n.op_type == "Constant" && a.name() == "value" && !n.outputs.empty()) {
      Value& out = g.mutable_value(n.outputs[0]);
      TensorType type = FromOnnxTensor(t);
      if (out.type.dtype == DType::kUnknown) out.type.dtype = type.dtype;
      if (!out.type.shape.rank_known()) out.type.shape = type.shape;
      out.known_ints = KnownInts(t);
    }
    if (n.op_type == "ConstantOfShape" && !n.outputs.empty()) {
      Value& out = g.mutable_value(n.outputs[0]);
      if (out.type.dtype == DType::kUnknown) out.type.dtype = FromOnnx(t.data_type());
      // The one-element fill value, kept as a scalar attribute so shape arithmetic can fold it.
      if (auto ints = KnownInts(t); ints && ints->size() == 1) {
        n.attrs.push_back({a.name(), (*ints)[0].value()});
      }
    }
  }

  // Attributes that fix an output dtype (Cast `to`, Constant `value_int(s)`/`value_float(s)`).
  void ApplyTypeAttrs(Graph& g, const Node& n, const onnx::NodeProto& proto) {
    if (n.outputs.empty()) return;
    Value& out = g.mutable_value(n.outputs[0]);
    if (n.op_type == "Cast") {
      if (auto to = n.IntAttr("to"); to && out.type.dtype == DType::kUnknown) {
        out.type.dtype = FromOnnx(static_cast<int>(*to));
      }
      return;
    }
    if (n.op_type != "Constant") return;
    for (const auto& a : proto.attribute()) {
      if (a.name() == "value_int") {
        out.type = {ValueKind::kTensor, DType::kInt64, Shape::Scalar()};
        out.known_ints = std::vector<Dim>{Dim::Static(a.i())};
      } else if (a.name() == "value_ints") {
        out.type = {ValueKind::kTensor, DType::kInt64, Shape::OfStatic({a.ints_size()})};
        std::vector<Dim> ints;
        for (std::int64_t v : a.ints()) ints.push_back(Dim::Static(v));
        if (ints.size() <= kMaxKnownInts) out.known_ints = std::move(ints);
      } else if (a.name() == "value_float") {
        out.type = {ValueKind::kTensor, DType::kFloat32, Shape::Scalar()};
      } else if (a.name() == "value_floats") {
        out.type = {ValueKind::kTensor, DType::kFloat32, Shape::OfStatic({a.floats_size()})};
      } else if (a.name() == "value_string") {
        out.type = {ValueKind::kTensor, DType::kString, Shape::Scalar()};
      } else if (a.name() == "value_strings") {
        out.type = {ValueKind::kTensor, DType::kString, Shape::OfStatic({a.strings_size()})};
      }
    }
  }

  std::vector<Diagnostic>& diags_;
  onnx::StringStringEntryProto metadata_entry_;  // ReadExporterMetadata's, reused
  OpLookupMemo ops_;
};

// A static shape whose byte size does not fit in 64 bits describes no tensor that can exist.
// True when a named node output still has no dtype or no rank after the own propagation.
bool HasTypeGaps(const Graph& g) {
  for (const Value& v : g.values()) {
    if (v.origin != ValueOrigin::kNodeOutput || v.name.empty() || v.type.kind != ValueKind::kTensor)
      continue;
    if (v.type.dtype == DType::kUnknown || !v.type.shape.rank_known()) return true;
  }
  for (const Node& n : g.nodes()) {
    for (const Subgraph& sub : n.subgraphs) {
      if (HasTypeGaps(*sub.graph)) return true;
    }
  }
  return false;
}

Result<Graph> BuildAndPropagate(const GraphView& view, LoadedModel& loaded,
                                std::optional<std::int64_t> rebatch) {
  GraphBuilder builder(loaded.diagnostics);
  std::vector<const Graph*> scopes;
  auto graph = builder.Build(view, loaded.graph.name(), scopes, 0);
  if (!graph) return graph.error();
  onnx_frontend::PropagateShapes(*graph, rebatch);
  return graph;
}

bool LooksLikeOnnx(const OnnxFile& file) {
  return file.has_graph && file.model.ir_version() > 0 &&
         (!file.nodes.empty() || file.model.graph().output_size() > 0);
}

// The whole ModelProto, for libonnx's shape inference: the split file's fields with its nodes and
// initializers parsed back in (the kept nodes as --dim/--batch left them).
onnx::ModelProto& WholeModel(const OnnxFile& file, const TopLevel& top,
                             google::protobuf::Arena& arena) {
  auto& model = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  model.CopyFrom(file.model);
  onnx::GraphProto& g = *model.mutable_graph();
  for (std::string_view bytes : file.initializers) ParseTopLevel(bytes, *g.add_initializer());
  for (std::size_t i = 0; i < file.nodes.size(); ++i) {
    auto kept = top.kept.find(static_cast<int>(i));
    if (kept != top.kept.end()) {
      g.add_node()->CopyFrom(kept->second);
    } else {
      ParseTopLevel(file.nodes[i].bytes, *g.add_node());
    }
  }
  return model;
}

}  // namespace

int SniffOnnx(const Source& source) {
  const std::string& b = source.bytes;
  // A ModelProto starts with field 1 (ir_version, varint: 0x08) in every exporter we know.
  if (!b.empty() && b[0] == 0x08) return 60;
  if (source.display_name.size() > 5 &&
      source.display_name.compare(source.display_name.size() - 5, 5, ".onnx") == 0) {
    return 30;
  }
  return 0;
}

namespace {

Result<LoadedModel> LoadOnnxUnannotated(const Source& source, const ShapeOptions& options) {
  const std::string& name = source.display_name;
  if (source.bytes.empty()) return MakeError(name + ": file is empty, expected an ONNX model");
  if (source.bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    return MakeError(name + ": larger than 2 GiB, which no ONNX file can be (protobuf's limit)");
  }
  const std::string not_onnx = name + ": " + std::string(kNotOnnx);
  auto file = SplitOnnxFile(source.bytes);
  if (!file) return MakeError(not_onnx);
  TopLevel top;
  if (!ReadTopLevel(*file, top)) return MakeError(not_onnx);
  if (!LooksLikeOnnx(*file))
    return MakeError(name + ": parsed as protobuf but holds no ONNX graph");
  if (top.graph_error) return MakeError(name + ": " + top.graph_error->message);
  if (auto dims = CheckDeclaredDims(top); !dims)
    return MakeError(name + ": " + dims.error().message);

  const onnx::ModelProto& model = file->model;
  LoadedModel loaded{
      Graph(model.graph().name().empty() ? "main" : model.graph().name()), "onnx", {}, {}, {}};
  if (!model.producer_name().empty()) {
    loaded.producer = model.producer_name() +
                      (model.producer_version().empty() ? "" : " " + model.producer_version());
  }
  auto staticized = ApplyShapeOptions(file->model, top, options, loaded.shape_notes);
  if (!staticized) return MakeError(staticized.error().message);
  const std::optional<std::int64_t> rebatch =
      staticized->replaced_static_batch ? options.batch : std::optional<std::int64_t>();
  FileNodes nodes(*file, top);
  auto graph =
      BuildAndPropagate(GraphView{model.graph(), top.initializers, nodes}, loaded, rebatch);
  if (!graph) return MakeError(name + ": " + graph.error().message);
  // ONNX shape inference is the fallback for ops tpu-doctor's own propagation does not know: it
  // costs more than the rest of loading together (it needs the whole model parsed), so it runs
  // only when a type is still unknown and the opset is one libonnx knows. After --batch replaced
  // a static batch of 1 it would spread the exporter's batch-1 reshape targets, which the own
  // propagation repairs, so it is skipped then.
  if (!rebatch && HasTypeGaps(*graph) && DefaultOpset(model) <= kOnnxInferenceMaxOpset) {
    // Parsed into an arena: a large graph's many small messages are allocated in a few blocks
    // and freed at once (blocks that grow to 64 MiB instead of protobuf's 8 KiB).
    google::protobuf::ArenaOptions arena_options;
    arena_options.start_block_size = 64 << 10;
    arena_options.max_block_size = 64 << 20;
    google::protobuf::Arena arena(arena_options);
    onnx::ModelProto& whole = WholeModel(*file, top, arena);
    if (RunOnnxShapeInference(whole, loaded.diagnostics)) {
      loaded.diagnostics.clear();
      graph = WithView(whole.graph(), [&](const GraphView& view) {
        return BuildAndPropagate(view, loaded, rebatch);
      });
      if (!graph) return MakeError(name + ": " + graph.error().message);
    }
  }
  if (auto sizes = CheckTensorSizes(*graph); !sizes)
    return MakeError(name + ": " + sizes.error().message);
  loaded.graph = std::move(*graph);
  return loaded;
}

}  // namespace

Result<LoadedModel> LoadOnnx(const Source& source, const ShapeOptions& options) {
  return WithOpSupport(LoadOnnxUnannotated(source, options));
}

}  // namespace tpudoctor

#include "src/frontends/tf/tf_graph_builder.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "src/frontends/tf/tf_attrs.h"
#include "src/frontends/tf/tf_shapes.h"
#include "tpudoctor/ir/verify.h"
#include "tpudoctor/knowledge/tf_ops.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::tf_frontend {
namespace {

namespace tfp = tpudoctor::tf;

constexpr int kMaxCallDepth = 64;
constexpr std::int64_t kMaxKnownInts = 64;  // small integer constants keep their values

DType DTypeOf(int t) {
  if (t > 100) t -= 100;  // reference types
  switch (t) {
    case tfp::DT_FLOAT:
      return DType::kFloat32;
    case tfp::DT_DOUBLE:
      return DType::kFloat64;
    case tfp::DT_INT32:
      return DType::kInt32;
    case tfp::DT_UINT8:
      return DType::kUInt8;
    case tfp::DT_INT16:
      return DType::kInt16;
    case tfp::DT_INT8:
      return DType::kInt8;
    case tfp::DT_STRING:
      return DType::kString;
    case tfp::DT_COMPLEX64:
      return DType::kComplex64;
    case tfp::DT_INT64:
      return DType::kInt64;
    case tfp::DT_BOOL:
      return DType::kBool;
    case tfp::DT_QINT8:
      return DType::kInt8;
    case tfp::DT_QUINT8:
      return DType::kUInt8;
    case tfp::DT_QINT32:
      return DType::kInt32;
    case tfp::DT_BFLOAT16:
      return DType::kBFloat16;
    case tfp::DT_UINT16:
      return DType::kUInt16;
    case tfp::DT_COMPLEX128:
      return DType::kComplex128;
    case tfp::DT_HALF:
      return DType::kFloat16;
    case tfp::DT_UINT32:
      return DType::kUInt32;
    case tfp::DT_UINT64:
      return DType::kUInt64;
    case tfp::DT_FLOAT8_E5M2:
      return DType::kFloat8E5M2;
    case tfp::DT_FLOAT8_E4M3FN:
      return DType::kFloat8E4M3FN;
    case tfp::DT_FLOAT8_E4M3FNUZ:
      return DType::kFloat8E4M3FNUZ;
    case tfp::DT_FLOAT8_E5M2FNUZ:
      return DType::kFloat8E5M2FNUZ;
    case tfp::DT_INT4:
      return DType::kInt4;
    case tfp::DT_UINT4:
      return DType::kUInt4;
    default:
      return DType::kUnknown;  // resource, variant, invalid
  }
}

std::string Dirname(const std::string& name) {
  const std::size_t slash = name.rfind('/');
  return slash == std::string::npos ? "" : name.substr(0, slash);
}

// "node", "node:1" (GraphDef), "node:out_arg:1" (FunctionDef), "^node" (control).
struct Ref {
  std::string node;
  std::string out_arg;
  int index = 0;
  bool control = false;
};

Ref ParseRef(std::string_view s) {
  Ref r;
  if (!s.empty() && s[0] == '^') {
    r.control = true;
    s.remove_prefix(1);
  }
  const std::vector<std::string_view> parts = Split(s, ':');
  r.node = std::string(parts[0]);
  auto number = [](std::string_view v) {
    int n = 0;
    for (char c : v) {
      if (c < '0' || c > '9' || n > 1000000) return 0;
      n = n * 10 + (c - '0');
    }
    return n;
  };
  if (parts.size() == 2) r.index = number(parts[1]);
  if (parts.size() >= 3) {
    r.out_arg = std::string(parts[1]);
    r.index = number(parts[2]);
  }
  return r;
}

// The flat output index of `out_arg:index` for ops with several output args.
int FlatIndex(const std::string& op, const std::string& out_arg, int index) {
  static const std::map<std::string, std::vector<std::string>> kArgs = {
      {"FusedBatchNorm",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV2",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV3",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2",
        "reserve_space_3"}},
      {"TopKV2", {"values", "indices"}},
      {"Unique", {"y", "idx"}},
      {"UniqueV2", {"y", "idx"}},
      {"Switch", {"output_false", "output_true"}},
      {"RefSwitch", {"output_false", "output_true"}},
      {"Merge", {"output", "value_index"}},
      {"MaxPoolWithArgmax", {"output", "argmax"}},
      {"NonMaxSuppressionV4", {"selected_indices", "valid_outputs"}},
      {"NonMaxSuppressionV5", {"selected_indices", "selected_scores", "valid_outputs"}},
      {"BroadcastGradientArgs", {"r0", "r1"}},
      {"QuantizeV2", {"output", "output_min", "output_max"}},
  };
  auto it = kArgs.find(op);
  if (it == kArgs.end() || out_arg.empty()) return index;
  auto at = std::find(it->second.begin(), it->second.end(), out_arg);
  return at == it->second.end() ? index : static_cast<int>(at - it->second.begin()) + index;
}

// Attribute entries sorted by key (files list them in any order).
std::vector<const tfp::AttrEntry*> SortedAttrs(const tfp::NodeDef& n) {
  std::vector<const tfp::AttrEntry*> v;
  for (const tfp::AttrEntry& e : n.attr()) v.push_back(&e);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->key() < b->key(); });
  return v;
}

// The dtype of output `i`, from the attributes ops use for it.
DType OutputDType(const tfp::NodeDef& n, int i) {
  static const std::set<std::string> kBool = {"Equal",
                                              "NotEqual",
                                              "Less",
                                              "LessEqual",
                                              "Greater",
                                              "GreaterEqual",
                                              "LogicalAnd",
                                              "LogicalOr",
                                              "LogicalNot",
                                              "IsNan",
                                              "IsInf",
                                              "IsFinite",
                                              "IsVariableInitialized",
                                              "VarIsInitializedOp",
                                              "StaticRegexFullMatch"};
  if (kBool.count(n.op())) return DType::kBool;
  if (LookupTfOp(n.op()).pipeline) return DType::kUnknown;  // a dataset is a variant handle
  for (const char* key : {"Tout", "output_types", "dtypes", "T", "out_types"}) {
    const tfp::AttrValue* a = Attr(n, key);
    if (a != nullptr && a->has_list() && a->list().type_size() > 0) {
      return i < a->list().type_size() ? DTypeOf(a->list().type(i)) : DType::kUnknown;
    }
  }
  if (n.op() == "Shape" || n.op() == "Size" || n.op() == "Rank" || n.op() == "ShapeN") {
    const tfp::AttrValue* a = Attr(n, "out_type");
    return a != nullptr ? DTypeOf(a->type()) : DType::kInt32;
  }
  if (n.op() == "ArgMax" || n.op() == "ArgMin") {
    const tfp::AttrValue* a = Attr(n, "output_type");
    return a != nullptr ? DTypeOf(a->type()) : DType::kInt64;
  }
  if ((n.op() == "TopKV2" || n.op() == "Unique") && i == 1) return DType::kInt32;
  if (n.op() == "Bitcast") {  // `T` is the input's type, `type` the output's
    const tfp::AttrValue* a = Attr(n, "type");
    return a != nullptr ? DTypeOf(a->type()) : DType::kUnknown;
  }
  for (const char* key :
       {"DstT", "dtype", "T", "out_type", "Tout", "output_type", "type", "Tidx"}) {
    const tfp::AttrValue* a = Attr(n, key);
    if (a != nullptr && a->value_case() == tfp::AttrValue::kType) return DTypeOf(a->type());
  }
  return DType::kUnknown;
}

class Builder {
 public:
  Builder(const tfp::GraphDef& graph, const ShapeOptions& options, LoadedModel& out)
      : graph_def_(graph), options_(options), out_(out) {
    for (const tfp::FunctionDef& f : graph.library().function())
      functions_[f.signature().name()] = &f;
  }

  Result<Ok> Build(const Signature& sig) {
    Body top;
    top.graph = &out_.graph;
    for (const tfp::NodeDef& n : graph_def_.node()) top.nodes[n.name()] = &n;
    for (const std::string& in : sig.inputs) {
      const Ref r = ParseRef(in);
      auto it = top.nodes.find(r.node);
      if (it == top.nodes.end()) return MakeError("signature input `" + in + "` names no node");
      auto shape = sig.input_shapes.find(in);
      const ValueId v =
          AddGraphInput(*it->second, shape == sig.input_shapes.end() ? nullptr : &shape->second);
      top.args[r.node] = v;
    }
    std::vector<Ref> wanted;
    for (const std::string& o : sig.outputs) wanted.push_back(ParseRef(o));
    if (wanted.empty()) wanted = Sinks(top);
    if (wanted.empty() && !top.nodes.empty()) {
      return MakeError("the graph has no result to check: every node feeds another (a cycle?)");
    }
    auto outs = BuildBody(top, wanted, 0);
    if (!outs) return outs.error();
    std::set<ValueId> added;
    for (ValueId v : *outs) {
      if (v != kNoValue && added.insert(v).second) out_.graph.AddOutput(v);
    }
    if (auto r = out_.graph.Finalize(); !r) return r;
    return CheckTensorSizes(out_.graph);
  }

 private:
  struct Body {
    Graph* graph = nullptr;
    std::string prefix;  // name prefix of inlined nodes
    std::map<std::string, const tfp::NodeDef*> nodes;
    std::map<std::string, ValueId> args;                // function args / signature inputs
    std::map<std::string, std::vector<ValueId>> built;  // node → its outputs
    bool function = false;
  };

  // `save/...`, `save_1/...`: the tf.train.Saver's checkpoint subgraph.
  static bool IsSaverScope(const std::string& name) {
    const std::string first = name.substr(0, name.find('/'));
    if (first.rfind("save", 0) != 0 || first.size() == name.size()) return false;
    if (first == "save") return true;
    if (first.size() < 6 || first[4] != '_') return false;
    return std::all_of(first.begin() + 5, first.end(), [](char c) { return c >= '0' && c <= '9'; });
  }

  // Without a signature: every node no other node reads, except checkpoint and init plumbing.
  static std::vector<Ref> Sinks(const Body& body) {
    std::set<std::string> read;
    for (const auto& [name, n] : body.nodes) {
      for (const std::string& in : n->input()) read.insert(ParseRef(in).node);
    }
    static const std::set<std::string> kPlumbing = {
        "NoOp",   "SaveV2",           "Save", "RestoreV2", "Restore", "MergeV2Checkpoints",
        "Assign", "AssignVariableOp", "Const"};
    std::vector<Ref> sinks;
    for (const auto& [name, n] : body.nodes) {
      if (read.count(name) || kPlumbing.count(n->op()) || IsSaverScope(name)) continue;
      Ref r;
      r.node = name;
      sinks.push_back(r);
    }
    return sinks;
  }

  // Builds the nodes `wanted` needs, in dependency order; returns the wanted values.
  Result<std::vector<ValueId>> BuildBody(Body& body, const std::vector<Ref>& wanted, int depth) {
    // Nodes needed (data and control inputs), and how many outputs each must have.
    std::map<std::string, int> outputs_needed;
    std::deque<std::string> todo;
    auto need = [&](const Ref& r) -> Result<Ok> {
      if (body.args.count(r.node) && !body.nodes.count(r.node)) return Ok{};
      auto it = body.nodes.find(r.node);
      if (it == body.nodes.end()) {
        if (body.args.count(r.node)) return Ok{};
        return MakeError("`" + r.node + "` is read but no node or argument has that name");
      }
      const int flat = r.control ? 0 : FlatIndex(it->second->op(), r.out_arg, r.index);
      auto [slot, fresh] = outputs_needed.try_emplace(r.node, 0);
      slot->second = std::max(slot->second, flat + 1);
      if (fresh) todo.push_back(r.node);
      return Ok{};
    };
    for (const Ref& r : wanted) {
      if (auto ok = need(r); !ok) return ok.error();
    }
    while (!todo.empty()) {
      const tfp::NodeDef& n = *body.nodes.at(todo.front());
      todo.pop_front();
      if (body.args.count(n.name())) continue;  // a signature input stands in for it
      for (const std::string& in : n.input()) {
        if (auto ok = need(ParseRef(in)); !ok) return ok.error();
      }
    }
    // Order: Kahn over the needed nodes; a Merge does not wait for its NextIteration input (the
    // back edge of a TF1 while loop).
    std::map<std::string, int> pending;
    std::map<std::string, std::vector<std::string>> readers;
    for (const auto& [name, count] : outputs_needed) {
      const tfp::NodeDef& n = *body.nodes.at(name);
      pending[name] = 0;
      if (body.args.count(name)) continue;
      for (const std::string& in : n.input()) {
        const Ref r = ParseRef(in);
        if (!outputs_needed.count(r.node) || body.args.count(r.node)) continue;
        if (IsBackEdge(body, n, r)) continue;
        ++pending[name];
        readers[r.node].push_back(name);
      }
    }
    std::deque<std::string> ready;
    for (const auto& [name, p] : pending) {
      if (p == 0) ready.push_back(name);
    }
    std::size_t done = 0;
    while (!ready.empty()) {
      const std::string name = ready.front();
      ready.pop_front();
      ++done;
      if (!body.args.count(name)) {
        if (auto r = BuildNode(body, *body.nodes.at(name), outputs_needed.at(name), depth); !r)
          return r.error();
      }
      for (const std::string& reader : readers[name]) {
        if (--pending[reader] == 0) ready.push_back(reader);
      }
    }
    if (done != pending.size()) {
      return MakeError("the graph has a cycle that is not a TF1 while loop's NextIteration edge");
    }
    std::vector<ValueId> values;
    for (const Ref& r : wanted) values.push_back(r.control ? kNoValue : Lookup(body, r));
    return values;
  }

  bool IsBackEdge(const Body& body, const tfp::NodeDef& n, const Ref& r) const {
    if (n.op() != "Merge" && n.op() != "RefMerge") return false;
    auto it = body.nodes.find(r.node);
    return it != body.nodes.end() &&
           (it->second->op() == "NextIteration" || it->second->op() == "RefNextIteration");
  }

  ValueId Lookup(const Body& body, const Ref& r) const {
    auto it = body.built.find(r.node);
    if (it != body.built.end()) {
      const tfp::NodeDef* n = body.nodes.count(r.node) ? body.nodes.at(r.node) : nullptr;
      const int flat = n ? FlatIndex(n->op(), r.out_arg, r.index) : r.index;
      return flat >= 0 && static_cast<std::size_t>(flat) < it->second.size()
                 ? it->second[static_cast<std::size_t>(flat)]
                 : kNoValue;
    }
    auto arg = body.args.find(r.node);
    return arg == body.args.end() ? kNoValue : arg->second;
  }

  Dim DimOf(std::int64_t size, std::size_t axis, const std::string& input) const {
    if (size >= 0) return Dim::Static(size);
    const std::string symbol = axis == 0       ? "batch"
                               : input.empty() ? ""
                                               : input + "_" + std::to_string(axis);
    if (symbol.empty()) return Dim::Unknown();
    if (auto it = options_.dims.find(symbol); it != options_.dims.end())
      return Dim::Static(it->second);
    if (axis == 0 && options_.batch) return Dim::Static(*options_.batch);
    return Dim::Symbol(symbol);
  }

  // A recorded shape; an unknown leading dim is the batch (the judgement is in docs/tensorflow.md).
  Shape ShapeOf(const tfp::TensorShapeProto& s, const std::string& input = "") const {
    if (s.unknown_rank()) return Shape();
    std::vector<Dim> dims;
    for (int i = 0; i < s.dim_size(); ++i)
      dims.push_back(DimOf(s.dim(i).size(), static_cast<std::size_t>(i), input));
    return Shape(std::move(dims));
  }

  ValueId AddGraphInput(const tfp::NodeDef& n, const std::vector<std::int64_t>* recorded) {
    TensorType t;
    t.dtype = OutputDType(n, 0);
    if (recorded != nullptr) {
      std::vector<Dim> dims;
      for (std::size_t i = 0; i < recorded->size(); ++i)
        dims.push_back(DimOf((*recorded)[i], i, n.name()));
      t.shape = Shape(std::move(dims));
    } else if (const tfp::AttrValue* s = Attr(n, "shape"); s && s->has_shape()) {
      t.shape = ShapeOf(s->shape(), n.name());
    }
    const ValueId v = out_.graph.AddValue(n.name(), t, ValueOrigin::kGraphInput);
    out_.graph.AddInput(v);
    return v;
  }

  std::string UniqueName(Graph& g, const std::string& base) {
    std::string name = base;
    for (int i = 1; g.FindValue(name).has_value() || taken_.count(name); ++i)
      name = base + "_" + std::to_string(i);
    taken_.insert(name);
    return name;
  }

  // The function a node calls by being a call op or by its op name.
  const tfp::FunctionDef* CalledFunction(const tfp::NodeDef& n) const {
    if (n.op() == "PartitionedCall" || n.op() == "StatefulPartitionedCall") {
      const tfp::AttrValue* f = Attr(n, "f");
      if (f != nullptr && f->has_func()) {
        auto it = functions_.find(f->func().name());
        return it == functions_.end() ? nullptr : it->second;
      }
    }
    auto it = functions_.find(n.op());
    return it == functions_.end() ? nullptr : it->second;
  }

  Result<Ok> BuildNode(Body& body, const tfp::NodeDef& n, int outputs, int depth) {
    std::vector<ValueId> inputs;
    for (const std::string& in : n.input()) {
      const Ref r = ParseRef(in);
      if (r.control || IsBackEdge(body, n, r)) continue;
      inputs.push_back(Lookup(body, r));
    }
    if (const tfp::FunctionDef* f = CalledFunction(n)) return Inline(body, n, *f, inputs, depth);
    Graph& g = *body.graph;
    const std::string name = body.prefix + n.name();
    // Variables and constants are weights.
    if (n.op() == "VarHandleOp" || n.op() == "VariableV2" || n.op() == "Variable" ||
        n.op() == "Const") {
      body.built[n.name()] = {AddWeight(g, n, name)};
      return Ok{};
    }
    if (n.op() == "Placeholder" || n.op() == "PlaceholderV2") {
      if (!body.function) {
        body.built[n.name()] = {AddGraphInput(n, nullptr)};
        return Ok{};
      }
    }
    Node node;
    node.name = name;
    node.framework_op = n.op();
    const TfOpInfo& info = LookupTfOp(n.op());
    node.domain = info.canonical.empty() ? "tf" : "";
    node.op_type = info.canonical.empty() ? n.op() : info.canonical;
    node.kind = info.info.kind;
    node.loc.scope = Dirname(name);
    node.inputs = inputs;
    CopyAttrs(n, node);
    if (auto r = AddSubgraphs(body, n, node, depth); !r) return r;
    const tfp::AttrValue* shapes = Attr(n, "_output_shapes");
    const int recorded = shapes && shapes->has_list() ? shapes->list().shape_size() : 0;
    const int count = std::max({outputs, recorded, 1});
    std::vector<ValueId> outs;
    std::vector<const Value*> in_values;
    for (ValueId v : inputs) in_values.push_back(v == kNoValue ? nullptr : &g.value(v));
    for (int i = 0; i < count; ++i) {
      TensorType t;
      t.dtype = OutputDType(n, i);
      if (i < recorded) {
        t.shape = ShapeOf(shapes->list().shape(i));
      } else if (i == 0) {
        if (auto inferred = InferTfShape(n, in_values)) t.shape = *inferred;
      }
      const ValueId v = g.AddValue(UniqueName(g, i == 0 ? name : name + ":" + std::to_string(i)), t,
                                   ValueOrigin::kNodeOutput);
      outs.push_back(v);
    }
    node.outputs = outs;
    CostAttrs(g, n, node);
    g.AddNode(std::move(node));
    body.built[n.name()] = std::move(outs);
    return Ok{};
  }

  ValueId AddWeight(Graph& g, const tfp::NodeDef& n, const std::string& name) {
    TensorType t;
    t.dtype = OutputDType(n, 0);
    std::optional<std::vector<Dim>> known;
    if (n.op() == "Const") {
      if (const tfp::AttrValue* v = Attr(n, "value"); v && v->has_tensor()) {
        t.shape = ShapeOf(v->tensor().tensor_shape());
        known = KnownInts(v->tensor());
      }
    } else if (const tfp::AttrValue* s = Attr(n, "shape"); s && s->has_shape()) {
      t.shape = ShapeOf(s->shape());
    }
    if (!t.shape.rank_known()) {
      if (const tfp::AttrValue* s = Attr(n, "_output_shapes");
          s && s->has_list() && s->list().shape_size() > 0)
        t.shape = ShapeOf(s->list().shape(0));
    }
    const ValueId v = g.AddValue(UniqueName(g, name), t, ValueOrigin::kInitializer);
    if (known) g.mutable_value(v).known_ints = std::move(known);
    if (n.op() == "Const") {
      if (const tfp::AttrValue* c = Attr(n, "value"); c && c->has_tensor()) {
        const auto& strings = c->tensor().string_val();
        if (!strings.empty() && strings.size() <= kMaxKnownInts &&
            std::all_of(strings.begin(), strings.end(),
                        [](const std::string& x) { return x.size() <= 4096; })) {
          g.mutable_value(v).known_strings =
              std::vector<std::string>(strings.begin(), strings.end());
        }
      }
    }
    return v;
  }

  // The values of a small integer or bool constant.
  static std::optional<std::vector<Dim>> KnownInts(const tfp::TensorProto& t) {
    std::vector<Dim> v;
    for (int x : t.int_val()) v.push_back(Dim::Static(x));
    for (std::int64_t x : t.int64_val()) v.push_back(Dim::Static(x));
    for (bool x : t.bool_val()) v.push_back(Dim::Static(x ? 1 : 0));
    const std::string& raw = t.tensor_content();
    if (v.empty() && !raw.empty() && raw.size() <= 8 * kMaxKnownInts) {
      if (t.dtype() == tfp::DT_INT32 && raw.size() % 4 == 0) {
        for (std::size_t i = 0; i < raw.size(); i += 4) {
          std::int32_t x;
          std::memcpy(&x, raw.data() + i, 4);
          v.push_back(Dim::Static(x));
        }
      } else if (t.dtype() == tfp::DT_INT64 && raw.size() % 8 == 0) {
        for (std::size_t i = 0; i < raw.size(); i += 8) {
          std::int64_t x;
          std::memcpy(&x, raw.data() + i, 8);
          v.push_back(Dim::Static(x));
        }
      }
    }
    if (v.empty() || static_cast<std::int64_t>(v.size()) > kMaxKnownInts) return std::nullopt;
    return v;
  }

  // Scalar attributes worth showing (and the ones checks read); no tensors, shapes or functions.
  static void CopyAttrs(const tfp::NodeDef& n, Node& node) {
    for (const tfp::AttrEntry* e : SortedAttrs(n)) {
      const std::string& key = e->key();
      if (key.starts_with("_")) continue;
      const tfp::AttrValue& a = e->value();
      switch (a.value_case()) {
        case tfp::AttrValue::kI:
          node.attrs.push_back({key, a.i()});
          break;
        case tfp::AttrValue::kB:
          node.attrs.push_back({key, std::int64_t{a.b() ? 1 : 0}});
          break;
        case tfp::AttrValue::kF:
          node.attrs.push_back({key, static_cast<double>(a.f())});
          break;
        case tfp::AttrValue::kS:
          if (a.s().size() <= 256) node.attrs.push_back({key, a.s()});
          break;
        case tfp::AttrValue::kList:
          if (a.list().i_size() > 0 && a.list().i_size() <= 64)
            node.attrs.push_back(
                {key, std::vector<std::int64_t>(a.list().i().begin(), a.list().i().end())});
          break;
        default:
          break;
      }
    }
  }

  // Matmuls and convolutions as XLA dimension numbers, pools' window as `kernel_shape`.
  static void CostAttrs(const Graph& g, const tfp::NodeDef& n, Node& node) {
    using V = std::vector<std::int64_t>;
    auto rank = [&](std::size_t i) {
      return i < node.inputs.size() && node.inputs[i] != kNoValue
                 ? g.value(node.inputs[i]).type.shape.rank()
                 : 0;
    };
    auto flag = [&](const char* key) { return BoolAttr(n, key); };
    const bool channels_first = ChannelsFirst(n);
    if (n.op() == "MatMul") {
      node.attrs.push_back({"lhs_contracting_dims", V{flag("transpose_a") ? 0 : 1}});
      node.attrs.push_back({"rhs_contracting_dims", V{flag("transpose_b") ? 1 : 0}});
    } else if (n.op().starts_with("BatchMatMul") && rank(0) >= 2 && rank(0) == rank(1)) {
      const auto r = static_cast<std::int64_t>(rank(0));
      V batch;
      for (std::int64_t i = 0; i + 2 < r; ++i) batch.push_back(i);
      node.attrs.push_back({"lhs_batch_dims", batch});
      node.attrs.push_back({"rhs_batch_dims", batch});
      node.attrs.push_back({"lhs_contracting_dims", V{flag("adj_x") ? r - 2 : r - 1}});
      node.attrs.push_back({"rhs_contracting_dims", V{flag("adj_y") ? r - 1 : r - 2}});
    } else if ((n.op() == "Conv2D" || n.op() == "Conv3D" || n.op() == "DepthwiseConv2dNative") &&
               rank(0) >= 3) {
      const std::size_t sp = rank(0) - 2;
      std::string digits;
      for (std::size_t i = 0; i < sp; ++i) digits += static_cast<char>('0' + i);
      const std::string act = channels_first ? "bf" + digits : "b" + digits + "f";
      const bool depthwise = n.op() == "DepthwiseConv2dNative";
      // A depthwise filter is [h, w, in, multiplier]: one input channel per group.
      node.attrs.push_back(
          {"dim_labels", act + "_" + digits + (depthwise ? "oi" : "io") + "->" + act});
      std::int64_t groups = 1;
      if (depthwise && node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
        const Shape& w = g.value(node.inputs[1]).type.shape;
        if (w.rank() == sp + 2 && w.dim(sp).is_static()) groups = w.dim(sp).value();
      }
      node.attrs.push_back({"feature_group_count", groups});
    } else if (node.kind == OpKind::kPool) {
      if (const tfp::AttrValue* k = Attr(n, "ksize");
          k && k->has_list() && k->list().i_size() >= 3) {
        V window;
        for (int i = 0; i < k->list().i_size(); ++i) {
          const bool spatial = channels_first ? i >= 2 : (i >= 1 && i + 1 < k->list().i_size());
          if (spatial) window.push_back(k->list().i(i));
        }
        node.attrs.push_back({"kernel_shape", window});
      }
    }
  }

  // Functions a node takes as attributes (a While's cond/body, an If's branches, a dataset map's
  // `f`) become its subgraphs.
  Result<Ok> AddSubgraphs(const Body& body, const tfp::NodeDef& n, Node& node, int depth) {
    for (const tfp::AttrEntry* e : SortedAttrs(n)) {
      const std::string& key = e->key();
      const tfp::AttrValue& a = e->value();
      std::vector<std::string> names;
      if (a.has_func()) names.push_back(a.func().name());
      if (a.has_list()) {
        for (const tfp::NameAttrList& f : a.list().func()) names.push_back(f.name());
      }
      for (std::size_t i = 0; i < names.size(); ++i) {
        auto it = functions_.find(names[i]);
        if (it == functions_.end()) continue;
        auto sub = BuildFunctionGraph(*it->second, body.prefix, depth + 1);
        if (!sub) return sub.error();
        node.subgraphs.push_back({names.size() == 1 ? key : key + "_" + std::to_string(i), *sub});
      }
    }
    return Ok{};
  }

  Result<std::shared_ptr<Graph>> BuildFunctionGraph(const tfp::FunctionDef& f,
                                                    const std::string& prefix, int depth) {
    if (depth > kMaxCallDepth) return MakeError("functions nested more than 64 deep");
    const std::string& fname = f.signature().name();
    if (active_.count(fname)) return MakeError("function `" + fname + "` calls itself");
    auto graph = std::make_shared<Graph>(fname);
    Body body;
    body.graph = graph.get();
    body.prefix = prefix;
    body.function = true;
    for (const tfp::NodeDef& n : f.node_def()) body.nodes[n.name()] = &n;
    for (const tfp::OpDef::ArgDef& arg : f.signature().input_arg()) {
      TensorType t;
      t.dtype = DTypeOf(arg.type());
      const ValueId v =
          graph->AddValue(UniqueName(*graph, prefix + arg.name()), t, ValueOrigin::kGraphInput);
      graph->AddInput(v);
      body.args[arg.name()] = v;
    }
    active_.insert(fname);
    auto outs = BuildBody(body, Returns(f), depth);
    active_.erase(fname);
    if (!outs) return MakeError("in function `" + fname + "`: " + outs.error().message);
    for (ValueId v : *outs) {
      if (v != kNoValue) graph->AddOutput(v);
    }
    if (auto r = graph->Finalize(); !r) return r.error();
    return graph;
  }

  static std::vector<Ref> Returns(const tfp::FunctionDef& f) {
    std::vector<Ref> rets;
    for (const tfp::OpDef::ArgDef& arg : f.signature().output_arg()) {
      std::string ret = arg.name();
      for (const tfp::RetEntry& e : f.ret()) {
        if (e.key() == arg.name()) ret = e.value();
      }
      rets.push_back(ParseRef(ret));
    }
    return rets;
  }

  // A call: the function's nodes join the caller's graph, named under the call's scope.
  Result<Ok> Inline(Body& caller, const tfp::NodeDef& call, const tfp::FunctionDef& f,
                    const std::vector<ValueId>& inputs, int depth) {
    if (depth >= kMaxCallDepth) return MakeError("function calls nested more than 64 deep");
    const std::string& fname = f.signature().name();
    if (active_.count(fname)) return MakeError("function `" + fname + "` calls itself");
    Body body;
    body.graph = caller.graph;
    const std::string scope = Dirname(call.name());
    body.prefix = caller.prefix + (scope.empty() ? "" : scope + "/");
    body.function = true;
    for (const tfp::NodeDef& n : f.node_def()) body.nodes[n.name()] = &n;
    for (int i = 0; i < f.signature().input_arg_size(); ++i) {
      body.args[f.signature().input_arg(i).name()] = static_cast<std::size_t>(i) < inputs.size()
                                                         ? inputs[static_cast<std::size_t>(i)]
                                                         : kNoValue;
    }
    active_.insert(fname);
    auto outs = BuildBody(body, Returns(f), depth + 1);
    active_.erase(fname);
    if (!outs) return MakeError("in function `" + fname + "`: " + outs.error().message);
    caller.built[call.name()] = *outs;
    return Ok{};
  }

  const tfp::GraphDef& graph_def_;
  const ShapeOptions& options_;
  LoadedModel& out_;
  std::map<std::string, const tfp::FunctionDef*> functions_;
  std::set<std::string> active_;
  std::set<std::string> taken_;
};

}  // namespace

Result<Ok> BuildTfGraph(const tfp::GraphDef& graph, const Signature& sig,
                        const ShapeOptions& options, LoadedModel& out) {
  Builder builder(graph, options, out);
  return builder.Build(sig);
}

}  // namespace tpudoctor::tf_frontend

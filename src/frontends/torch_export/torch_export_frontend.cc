#include <map>
#include <set>

#include "src/frontends/archives.h"
#include "src/frontends/torch_export/sym_expr.h"
#include "src/frontends/with_op_support.h"
#include "src/support/json_input.h"
#include "src/support/zip_archive.h"
#include "tpudoctor/frontend/torch_export.h"
#include "tpudoctor/ir/verify.h"
#include "tpudoctor/knowledge/torch_ops.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

using nlohmann::json;
using torch_export::ParseSymDim;
using torch_export::SymDim;

// A program description far larger than any real model.json (weights are separate files).
constexpr std::uint64_t kMaxProgramBytes = std::uint64_t{128} << 20;
constexpr int kMaxNesting = 32;  // higher-order ops inside higher-order ops

// torch/_export/serde/schema.py ScalarType.
DType DTypeOf(std::int64_t scalar_type) {
  switch (scalar_type) {
    case 1:
      return DType::kUInt8;
    case 2:
      return DType::kInt8;
    case 3:
      return DType::kInt16;
    case 4:
      return DType::kInt32;
    case 5:
      return DType::kInt64;
    case 6:
      return DType::kFloat16;
    case 7:
      return DType::kFloat32;
    case 8:
      return DType::kFloat64;
    case 10:
      return DType::kComplex64;
    case 11:
      return DType::kComplex128;
    case 12:
      return DType::kBool;
    case 13:
      return DType::kBFloat16;
    case 28:
      return DType::kUInt16;
    case 29:
      return DType::kFloat8E4M3FN;
    case 30:
      return DType::kFloat8E5M2;
    case 31:
      return DType::kFloat8E4M3FNUZ;
    case 32:
      return DType::kFloat8E5M2FNUZ;
    default:
      return DType::kUnknown;
  }
}

// Nodes that compute symbolic integers or check them at run time: not tensor work.
bool IsSymbolicBookkeeping(std::string_view target) {
  static const std::set<std::string_view> kAten = {"sym_size",
                                                   "sym_numel",
                                                   "sym_stride",
                                                   "sym_storage_offset",
                                                   "_assert_scalar",
                                                   "_assert_tensor_metadata",
                                                   "_assert_async",
                                                   "sym_constrain_range",
                                                   "sym_constrain_range_for_size",
                                                   "_functional_assert_async",
                                                   "_functional_assert_scalar",
                                                   "_functional_sym_constrain_range",
                                                   "_functional_sym_constrain_range_for_size",
                                                   "sym_not",
                                                   "sym_float",
                                                   "sym_int",
                                                   "sym_max",
                                                   "sym_min",
                                                   "sym_ite",
                                                   "sym_sqrt"};
  if (target.starts_with("_operator.") || target.starts_with("operator.") ||
      target.starts_with("builtins.") || target.starts_with("math.") ||
      target.starts_with("torch.sym_") || target.starts_with("torch._sym_")) {
    return true;
  }
  return target.starts_with("aten.") && kAten.count(AtenPacket(target.substr(5))) > 0;
}

// The deepest frame of a stack trace outside PyTorch's own package: the user's line (or the
// library's, like transformers', that the user called).
SourceLoc UserFrame(std::string_view trace) {
  SourceLoc loc;
  for (std::string_view line : SplitLines(trace)) {
    line = Trim(line);
    if (!line.starts_with("File \"")) continue;
    const std::size_t end = line.find('"', 6);
    if (end == std::string_view::npos) continue;
    const std::string_view file = line.substr(6, end - 6);
    if (file.find("/torch/") != std::string_view::npos || file.starts_with("torch/") ||
        file.find("<eval_with_key>") != std::string_view::npos) {
      continue;
    }
    const std::size_t at = line.find(", line ", end);
    if (at == std::string_view::npos) continue;
    int n = 0;
    for (std::size_t i = at + 7;
         i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])); ++i) {
      n = n * 10 + (line[i] - '0');
      if (n > 100000000) break;
    }
    loc.file = std::string(file);
    loc.line = n;
  }
  return loc;
}

// `L__self__,,Net;L__self__a,a,torch.nn.modules.linear.Linear` → "a (Linear)".
std::string ModuleScope(std::string_view stack) {
  if (stack.empty()) return "";
  const std::vector<std::string_view> entries = Split(stack, ';');
  const std::vector<std::string_view> parts = Split(entries.back(), ',');
  if (parts.size() < 3 || parts[1].empty()) return "";
  std::string_view cls = parts.back();
  const std::size_t dot = cls.rfind('.');
  if (dot != std::string_view::npos) cls = cls.substr(dot + 1);
  return std::string(parts[1]) + " (" + std::string(cls) + ")";
}

// The tensor name of an argument: {"as_tensor": {"name": n}} or {"name": n}.
std::string TensorName(const json& arg) {
  if (const json* t = Member(arg, "as_tensor")) return StringMember(*t, "name");
  return StringMember(arg, "name");
}

class Converter {
 public:
  Converter(const json& program, const ShapeOptions& options, LoadedModel& out)
      : program_(program), options_(options), out_(out) {}

  // A higher-order op's branch (`torch.cond`'s true_fn): a graph of its own whose inputs are the
  // operands passed to it.
  Result<Ok> RunNested(const json& graph, const std::map<std::string, std::int64_t>& symbols,
                       int depth) {
    depth_ = depth;
    symbols_ = symbols;
    if (const json* values = Member(graph, "tensor_values"); values && values->is_object()) {
      for (auto it = values->begin(); it != values->end(); ++it) meta_[it.key()] = &it.value();
    }
    if (const json* inputs = Member(graph, "inputs"); inputs && inputs->is_array()) {
      for (const json& in : *inputs) {
        const std::string name = TensorName(in);
        if (name.empty() || ids_.count(name)) continue;
        const ValueId id = g().AddValue(name, TypeOf(name), ValueOrigin::kGraphInput);
        ids_[name] = id;
        g().AddInput(id);
      }
    }
    const json* nodes = Member(graph, "nodes");
    if (nodes == nullptr || !nodes->is_array()) return MakeError("a branch graph has no `nodes`");
    for (const json& n : *nodes) {
      if (auto r = AddNode(n); !r) return r;
    }
    if (const json* outs = Member(graph, "outputs"); outs && outs->is_array()) {
      for (const json& o : *outs) {
        auto it = ids_.find(TensorName(o));
        if (it != ids_.end()) g().AddOutput(it->second);
      }
    }
    return g().Finalize();
  }

  Result<Ok> Run() {
    const json* module = Member(program_, "graph_module");
    const json* graph = module ? Member(*module, "graph") : nullptr;
    if (graph == nullptr || !graph->is_object())
      return MakeError("not a torch.export program (no `graph_module.graph`)");
    if (const json* values = Member(*graph, "tensor_values"); values && values->is_object()) {
      for (auto it = values->begin(); it != values->end(); ++it) meta_[it.key()] = &it.value();
    }
    if (auto r = BindSymbols(*module, *graph); !r) return r;
    if (auto r = AddInputs(*module, *graph); !r) return r;
    const json* nodes = Member(*graph, "nodes");
    if (nodes == nullptr || !nodes->is_array()) return MakeError("the graph has no `nodes` list");
    for (const json& n : *nodes) {
      if (auto r = AddNode(n); !r) return r;
    }
    AddOutputs(*module, *graph);
    const std::string version = StringMember(program_, "torch_version");
    if (!version.empty()) out_.producer = "pytorch " + version;
    if (auto r = out_.graph.Finalize(); !r) return r;
    return CheckTensorSizes(out_.graph);
  }

 private:
  Graph& g() { return out_.graph; }

  // --dim NAME=V gives a symbol a value; --batch N gives it to the symbol of the first user
  // input's leading dim.
  Result<Ok> BindSymbols(const json& module, const json& graph) {
    for (const auto& [name, value] : options_.dims) symbols_[name] = value;
    if (!options_.batch) return Ok{};
    const std::string first = FirstUserInput(module, graph);
    const json* meta = first.empty() ? nullptr : MetaOf(first);
    const json* sizes = meta ? Member(*meta, "sizes") : nullptr;
    if (sizes == nullptr || !sizes->is_array() || sizes->empty()) {
      out_.shape_notes.push_back("--batch found no input with a leading dim to set");
      return Ok{};
    }
    const json& d0 = (*sizes)[0];
    if (auto fixed = IntMember(d0, "as_int")) {
      if (*fixed != *options_.batch) {
        out_.shape_notes.push_back("input `" + first + "` was exported with a static batch of " +
                                   std::to_string(*fixed) +
                                   "; --batch does not change it (export with "
                                   "`dynamic_shapes={\"x\": {0: Dim.AUTO}}` to vary it)");
      }
      return Ok{};
    }
    const SymDim d = ParseSymDim(ExprOf(d0), {});
    if (d.symbols.size() == 1 && d.dim.is_symbol()) {
      symbols_.emplace(*d.symbols.begin(), *options_.batch);
    } else {
      out_.shape_notes.push_back("the leading dim of input `" + first +
                                 "` is an expression; give its symbols values with --dim");
    }
    return Ok{};
  }

  static std::string ExprOf(const json& size) {
    const json* e = Member(size, "as_expr");
    if (e == nullptr) return "";
    if (e->is_string()) return e->get<std::string>();
    return StringMember(*e, "expr_str");
  }

  std::string FirstUserInput(const json& module, const json& graph) {
    if (const json* specs = SignatureList(module, "input_specs")) {
      for (const json& spec : *specs) {
        if (const json* u = Member(spec, "user_input")) {
          const json* arg = Member(*u, "arg");
          if (arg != nullptr && !TensorName(*arg).empty()) return TensorName(*arg);
        }
      }
    }
    if (const json* inputs = Member(graph, "inputs"); inputs && inputs->is_array()) {
      for (const json& in : *inputs) {
        if (!TensorName(in).empty()) return TensorName(in);
      }
    }
    return "";
  }

  static const json* SignatureList(const json& module, std::string_view key) {
    const json* sig = Member(module, "signature");
    const json* list = sig ? Member(*sig, key) : nullptr;
    return list != nullptr && list->is_array() ? list : nullptr;
  }

  const json* MetaOf(const std::string& name) const {
    auto it = meta_.find(name);
    return it == meta_.end() ? nullptr : it->second;
  }

  TensorType TypeOf(const std::string& name) {
    TensorType t;
    const json* meta = MetaOf(name);
    if (meta == nullptr) return t;
    t.dtype = DTypeOf(IntMember(*meta, "dtype").value_or(0));
    const json* sizes = Member(*meta, "sizes");
    if (sizes == nullptr || !sizes->is_array()) return t;
    std::vector<Dim> dims;
    for (const json& s : *sizes) {
      if (auto v = IntMember(s, "as_int"); v && *v >= 0) {
        dims.push_back(Dim::Static(*v));
      } else {
        SymDim d = ParseSymDim(ExprOf(s), symbols_);
        dims.push_back(d.dim);
      }
    }
    t.shape = Shape(std::move(dims));
    return t;
  }

  Result<Ok> AddInputs(const json& module, const json& graph) {
    // Parameters, buffers and constants are weights; user inputs are the graph's inputs.
    std::map<std::string, std::string> weight_names;  // graph name → state-dict name
    std::set<std::string> user;
    if (const json* specs = SignatureList(module, "input_specs")) {
      for (const json& spec : *specs) {
        if (!spec.is_object() || spec.empty()) continue;
        const std::string kind = spec.begin().key();
        const json& body = spec.begin().value();
        const json* arg = Member(body, "arg");
        const std::string name = arg ? TensorName(*arg) : "";
        if (name.empty()) continue;
        if (kind == "user_input") {
          user.insert(name);
        } else if (kind == "parameter" || kind == "buffer" || kind == "tensor_constant") {
          std::string fqn = StringMember(body, kind + "_name");
          weight_names[name] = fqn.empty() ? name : fqn;
        }
      }
    }
    const json* inputs = Member(graph, "inputs");
    if (inputs == nullptr || !inputs->is_array()) return MakeError("the graph has no `inputs`");
    for (const json& in : *inputs) {
      const std::string name = TensorName(in);
      if (name.empty() || ids_.count(name)) continue;  // a symbolic int or a constant
      auto w = weight_names.find(name);
      const bool weight = w != weight_names.end();
      const ValueId id =
          g().AddValue(weight ? w->second : name, TypeOf(name),
                       weight ? ValueOrigin::kInitializer : ValueOrigin::kGraphInput);
      ids_[name] = id;
      if (!weight) g().AddInput(id);
    }
    return Ok{};
  }

  void AddOutputs(const json& module, const json& graph) {
    std::vector<std::string> names;
    if (const json* specs = SignatureList(module, "output_specs")) {
      for (const json& spec : *specs) {
        if (!spec.is_object() || spec.empty()) continue;
        const std::string kind = spec.begin().key();
        const json* arg = Member(spec.begin().value(), "arg");
        if ((kind == "user_output" || kind == "loss_output") && arg)
          names.push_back(TensorName(*arg));
      }
    }
    if (names.empty()) {
      if (const json* outs = Member(graph, "outputs"); outs && outs->is_array()) {
        for (const json& o : *outs) names.push_back(TensorName(o));
      }
    }
    std::set<ValueId> added;
    for (const std::string& name : names) {
      auto it = ids_.find(name);
      if (it != ids_.end() && added.insert(it->second).second) g().AddOutput(it->second);
    }
  }

  struct Args {
    std::vector<std::pair<std::string, std::string>> tensors;  // (argument name, tensor name)
    std::vector<Attribute> attrs;
    std::vector<std::pair<std::string, const json*>> graphs;  // a higher-order op's branches
  };

  // Tensor arguments in order (lists flattened), and scalar arguments as attributes.
  static Args ReadArgs(const json& node) {
    Args a;
    const json* inputs = Member(node, "inputs");
    if (inputs == nullptr || !inputs->is_array()) return a;
    for (const json& in : *inputs) {
      const std::string arg_name = StringMember(in, "name");
      const json* arg = Member(in, "arg");
      if (arg == nullptr || !arg->is_object() || arg->empty()) continue;
      const std::string kind = arg->begin().key();
      const json& v = arg->begin().value();
      if (kind == "as_tensor") {
        a.tensors.emplace_back(arg_name, StringMember(v, "name"));
      } else if (kind == "as_graph") {
        if (const json* graph = Member(v, "graph")) a.graphs.emplace_back(arg_name, graph);
      } else if (kind == "as_tensors" || kind == "as_optional_tensors") {
        if (!v.is_array()) continue;
        for (const json& t : v) {
          const json* inner = Member(t, "as_tensor");
          std::string name = inner ? StringMember(*inner, "name") : StringMember(t, "name");
          if (!name.empty()) a.tensors.emplace_back(arg_name, name);
        }
      } else if (kind == "as_optional_tensor") {
        if (const json* t = Member(v, "as_tensor"))
          a.tensors.emplace_back(arg_name, StringMember(*t, "name"));
      } else if ((kind == "as_int" || kind == "as_bool") &&
                 (v.is_number_integer() || v.is_boolean())) {
        a.attrs.push_back(
            {arg_name, v.is_boolean() ? std::int64_t{v.get<bool>()} : v.get<std::int64_t>()});
      } else if (kind == "as_ints" && v.is_array()) {
        std::vector<std::int64_t> ints;
        for (const json& x : v) {
          if (x.is_number_integer()) ints.push_back(x.get<std::int64_t>());
        }
        a.attrs.push_back({arg_name, std::move(ints)});
      } else if (kind == "as_float" && v.is_number()) {
        a.attrs.push_back({arg_name, v.get<double>()});
      } else if (kind == "as_string" && v.is_string()) {
        a.attrs.push_back({arg_name, v.get<std::string>()});
      }
    }
    return a;
  }

  // Output tensor names; a symbolic-int output (`item`) gets a scalar value of its own.
  static std::vector<std::string> OutputNames(const json& node) {
    std::vector<std::string> names;
    const json* outputs = Member(node, "outputs");
    if (outputs == nullptr || !outputs->is_array()) return names;
    for (const json& o : *outputs) {
      if (!o.is_object() || o.empty()) continue;
      const std::string kind = o.begin().key();
      const json& v = o.begin().value();
      if (kind == "as_tensor") {
        names.push_back(StringMember(v, "name"));
      } else if (kind == "as_tensors" && v.is_array()) {
        for (const json& t : v) names.push_back(StringMember(t, "name"));
      } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
        names.push_back(StringMember(v, "as_name"));
      }
    }
    return names;
  }

  Result<Ok> AddNode(const json& node) {
    std::string target = StringMember(node, "target");
    const std::string name = StringMember(node, "name");
    if (target.empty()) return MakeError("node `" + name + "` has no target");
    if (target.starts_with("torch.ops.")) target = target.substr(10);
    if (IsSymbolicBookkeeping(target)) return Ok{};
    Args args = ReadArgs(node);
    Node n;
    n.name = name;
    n.framework_op = target;
    n.attrs = std::move(args.attrs);
    for (const auto& [arg_name, tensor] : args.tensors) {
      auto it = ids_.find(tensor);
      if (it == ids_.end()) {
        return MakeError("node `" + name + "` uses `" + tensor +
                         "`, which no earlier node or input defines");
      }
      n.inputs.push_back(it->second);
    }
    Canonicalize(target, n);
    for (const auto& [arg_name, graph] : args.graphs) {
      if (depth_ >= kMaxNesting) return MakeError("higher-order ops nested more than 32 deep");
      LoadedModel branch{Graph(arg_name), "torch.export", "", {}, {}};
      Converter nested(program_, options_, branch);
      if (auto r = nested.RunNested(*graph, symbols_, depth_ + 1); !r) {
        return MakeError("in `" + name + "` " + arg_name + ": " + r.error().message);
      }
      n.subgraphs.push_back({arg_name, std::make_shared<Graph>(std::move(branch.graph))});
    }
    if (const json* meta = Member(node, "metadata")) {
      n.loc = UserFrame(StringMember(*meta, "stack_trace"));
      n.loc.scope = ModuleScope(StringMember(*meta, "nn_module_stack"));
    }
    DType scalar_dtype = n.inputs.empty() ? DType::kUnknown : g().value(n.inputs[0]).type.dtype;
    for (const std::string& out : OutputNames(node)) {
      if (out.empty() || ids_.count(out)) {
        return MakeError("node `" + name + "` defines `" + out + "` again (or an empty name)");
      }
      TensorType t = TypeOf(out);
      if (!MetaOf(out))
        t = TensorType{ValueKind::kTensor, scalar_dtype,
                       Shape(std::vector<Dim>{})};  // a symbolic scalar
      const ValueId id = g().AddValue(out, std::move(t), ValueOrigin::kNodeOutput);
      ids_[out] = id;
      n.outputs.push_back(id);
    }
    if (AtenPacket(n.op_type) == "scaled_dot_product_attention" && ExpandAttention(n)) return Ok{};
    g().AddNode(std::move(n));
    return Ok{};
  }

  // scaled_dot_product_attention(q, k, v, mask?) as what it computes: scores = q·kᵀ per head,
  // softmax (with the mask), context = probs·v, so the MXU, memory and cost rules see both
  // matmuls and the [.., Lq, Lk] scores. False (node left as it is) when the ranks are unknown.
  bool ExpandAttention(Node& n) {
    if (n.inputs.size() < 3 || n.outputs.empty()) return false;
    const Shape& q = g().value(n.inputs[0]).type.shape;
    const Shape& k = g().value(n.inputs[1]).type.shape;
    const Shape& v = g().value(n.inputs[2]).type.shape;
    const std::size_t r = q.rank();
    if (!q.rank_known() || r < 3 || k.rank() != r || v.rank() != r) return false;
    using V = std::vector<std::int64_t>;
    V batch;
    for (std::size_t i = 0; i + 2 < r; ++i) batch.push_back(static_cast<std::int64_t>(i));
    const auto last = static_cast<std::int64_t>(r) - 1;
    std::vector<Dim> scores_dims(q.dims().begin(), q.dims().end() - 1);
    scores_dims.push_back(k.dim(r - 2));
    const TensorType scores_type{ValueKind::kTensor, g().value(n.inputs[0]).type.dtype,
                                 Shape(scores_dims)};
    auto stage = [&](const std::string& suffix, const std::string& op, OpKind kind,
                     std::vector<ValueId> inputs, std::vector<Attribute> attrs,
                     std::vector<ValueId> outputs) {
      Node s;
      s.name = n.name + suffix;
      s.framework_op = n.framework_op;
      s.op_type = op;
      s.kind = kind;
      s.inputs = std::move(inputs);
      s.attrs = std::move(attrs);
      s.outputs = std::move(outputs);
      s.loc = n.loc;
      g().AddNode(std::move(s));
    };
    const ValueId scores = g().AddValue(n.name + "/scores", scores_type, ValueOrigin::kNodeOutput);
    const ValueId probs = g().AddValue(n.name + "/probs", scores_type, ValueOrigin::kNodeOutput);
    stage("/scores", "MatMul", OpKind::kMatMul, {n.inputs[0], n.inputs[1]},
          {{"lhs_batch_dims", batch},
           {"rhs_batch_dims", batch},
           {"lhs_contracting_dims", V{last}},
           {"rhs_contracting_dims", V{last}}},
          {scores});
    std::vector<ValueId> softmax_in = {scores};
    if (n.inputs.size() > 3) softmax_in.push_back(n.inputs[3]);  // the attention mask
    stage("/softmax", "Softmax", OpKind::kSoftmax, softmax_in, {}, {probs});
    stage("", "MatMul", OpKind::kMatMul, {probs, n.inputs[2]},
          {{"lhs_batch_dims", batch},
           {"rhs_batch_dims", batch},
           {"lhs_contracting_dims", V{last}},
           {"rhs_contracting_dims", V{last - 1}}},
          n.outputs);
    return true;
  }

  // Sets domain/op_type/kind from the ATen table, and reshapes the inputs and attributes of the
  // ops whose canonical form orders or names them differently.
  void Canonicalize(const std::string& target, Node& n) {
    const std::size_t dot = target.find('.');
    const std::string ns = target.substr(0, dot);
    const std::string op = dot == std::string::npos ? "" : target.substr(dot + 1);
    if (ns == "higher_order" && op == "cond") {
      // cond(pred, true_fn, false_fn, operands): an If whose branches take the operands.
      n.op_type = "If";
      n.kind = OpKind::kControlFlow;
      return;
    }
    if (ns != "aten") {
      n.domain = ns == "higher_order" ? "aten" : "torch." + ns;
      n.op_type = op;
      n.kind = ns == "higher_order" ? OpKind::kControlFlow : OpKind::kUnknown;
      return;
    }
    const AtenOpInfo info = LookupAtenOp(op);
    n.kind = info.info.kind;
    if (info.canonical.empty()) {
      n.domain = "aten";
      n.op_type = op;
      return;
    }
    n.op_type = info.canonical;
    const std::string_view packet = AtenPacket(op);
    auto rank = [&](std::size_t i) {
      return i < n.inputs.size() ? g().value(n.inputs[i]).type.shape.rank() : 0;
    };
    if (packet == "linear" && n.inputs.size() >= 2) {
      // x[..., k] · w[n, k]ᵀ
      n.attrs.push_back({"lhs_contracting_dims",
                         std::vector<std::int64_t>{static_cast<std::int64_t>(rank(0)) - 1}});
      n.attrs.push_back({"rhs_contracting_dims", std::vector<std::int64_t>{1}});
    } else if (packet == "addmm" && n.inputs.size() == 3) {
      n.inputs = {n.inputs[1], n.inputs[2], n.inputs[0]};  // Gemm(mat1, mat2, bias)
    } else if (info.info.kind == OpKind::kConv) {
      if (auto groups = n.IntAttr("groups")) n.attrs.push_back({"group", *groups});
      if (n.IntAttr("transposed").value_or(0) != 0) {
        n.op_type = "ConvTranspose";
        n.kind = OpKind::kConvTranspose;
      }
    } else if (info.info.kind == OpKind::kPool) {
      if (auto k = n.IntsAttr("kernel_size")) n.attrs.push_back({"kernel_shape", *k});
    } else if (packet == "index") {
      // A boolean mask selects a data-dependent number of elements; integer indices gather.
      for (std::size_t i = 1; i < n.inputs.size(); ++i) {
        if (g().value(n.inputs[i]).type.dtype == DType::kBool) {
          n.op_type = "Compress";
          n.kind = OpKind::kDataDependent;
        }
      }
    }
  }

  const json& program_;
  const ShapeOptions& options_;
  LoadedModel& out_;
  std::map<std::string, const json*> meta_;
  std::map<std::string, ValueId> ids_;
  std::map<std::string, std::int64_t> symbols_;
  int depth_ = 0;
};

const ZipEntry* ProgramEntry(const ZipArchive& zip) {
  if (const ZipEntry* e = zip.FindSuffix("models/model.json")) return e;
  for (const ZipEntry& e : zip.entries()) {
    const std::size_t at = e.name.find("models/");
    if (at != std::string::npos && (at == 0 || e.name[at - 1] == '/') && e.name.size() > 5 &&
        e.name.compare(e.name.size() - 5, 5, ".json") == 0 &&
        e.name.find('/', at + 7) == std::string::npos) {
      return &e;
    }
  }
  return zip.FindSuffix("serialized_exported_program.json");  // torch < 2.6
}

bool LooksLikeProgramJson(std::string_view bytes) {
  const std::string_view head = bytes.substr(0, 1 << 16);
  const std::size_t first = head.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && head[first] == '{' &&
         head.find("\"graph_module\"") != std::string_view::npos;
}

}  // namespace

// A program's text, parsed and converted; `what` names it in errors.
static Result<LoadedModel> LoadProgramText(std::string_view text, const std::string& what,
                                           const ShapeOptions& options) {
  auto program = ParseJsonInput(text, what);
  if (!program) return program.error();
  LoadedModel loaded{Graph("main"), "torch.export", "", {}, {}};
  Converter converter(*program, options, loaded);
  if (auto r = converter.Run(); !r) return MakeError(what + ": " + r.error().message);
  return loaded;
}

bool IsTorchExportArchive(const ZipArchive& zip) { return ProgramEntry(zip) != nullptr; }

namespace {

Result<LoadedModel> LoadTorchExportArchiveUnannotated(const ZipArchive& zip,
                                                      const std::string& display_name,
                                                      const ShapeOptions& options) {
  const ZipEntry* entry = ProgramEntry(zip);
  if (entry == nullptr) {
    return MakeError(display_name +
                     ": a zip archive without `models/model.json`, so not a torch.export .pt2 "
                     "archive");
  }
  auto bytes = zip.Read(*entry, kMaxProgramBytes);
  if (!bytes) return bytes.error();
  return LoadProgramText(*bytes, display_name + ": " + entry->name, options);
}

}  // namespace

Result<LoadedModel> LoadTorchExportArchive(const ZipArchive& zip, const std::string& display_name,
                                           const ShapeOptions& options) {
  return WithOpSupport(LoadTorchExportArchiveUnannotated(zip, display_name, options));
}

int SniffTorchExport(const Source& source) {
  if (LooksLikeProgramJson(source.bytes)) return 85;
  if (!LooksLikeZip(source.bytes)) return 0;
  auto zip = ZipArchive::Open(source.bytes, source.display_name);
  return zip && IsTorchExportArchive(**zip) ? 95 : 0;
}

namespace {

Result<LoadedModel> LoadTorchExportUnannotated(const Source& source, const ShapeOptions& options) {
  if (!LooksLikeZip(source.bytes)) {
    return LoadProgramText(source.bytes, source.display_name, options);
  }
  auto zip = ZipArchive::Open(source.bytes, source.display_name);
  if (!zip) return zip.error();
  return LoadTorchExportArchiveUnannotated(**zip, source.display_name, options);
}

}  // namespace

Result<LoadedModel> LoadTorchExport(const Source& source, const ShapeOptions& options) {
  return WithOpSupport(LoadTorchExportUnannotated(source, options));
}

}  // namespace tpudoctor

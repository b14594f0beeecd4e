#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "src/frontends/hlo/hlo_ast.h"
#include "src/frontends/with_op_support.h"
#include "tpudoctor/frontend/hlo.h"
#include "tpudoctor/knowledge/hlo_ops.h"
#include "tpudoctor/support/string_view_map.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

using hlo::HloComputation;
using hlo::HloInstr;
using hlo::HloModule;
using hlo::HloShape;

constexpr int kMaxCallDepth = 32;
constexpr std::size_t kMaxNodes = 5'000'000;  // across all subgraph copies

// Tensor types of the leaves of a (possibly nested) tuple shape, depth first.
void Leaves(const HloShape& s, std::vector<TensorType>& out) {
  if (s.is_tuple) {
    for (const HloShape& e : s.elements) Leaves(e, out);
    return;
  }
  if (s.is_token) {
    out.push_back({ValueKind::kUnknown, DType::kUnknown, tpudoctor::Shape::Scalar()});
    return;
  }
  std::vector<Dim> dims;
  for (std::size_t i = 0; i < s.dims.size(); ++i) {
    const bool dynamic = i < s.dynamic.size() && s.dynamic[i];
    // A bounded dynamic dim (`<=N`); `?` is unknown.
    if (dynamic && s.dims[i].is_static()) {
      dims.push_back(Dim::Bounded(s.dims[i].value()));
    } else {
      dims.push_back(s.dims[i]);
    }
  }
  out.push_back({ValueKind::kTensor, s.dtype, tpudoctor::Shape(std::move(dims))});
}

// `{1,0}` or `{}` → ints; nullopt when it is not a flat int list.
std::optional<std::vector<std::int64_t>> IntList(std::string_view raw) {
  raw = Trim(raw);
  if (raw.size() < 2 || raw.front() != '{' || raw.back() != '}') return std::nullopt;
  std::vector<std::int64_t> out;
  std::string_view body = Trim(raw.substr(1, raw.size() - 2));
  if (body.empty()) return out;
  for (std::string_view part : Split(body, ',')) {
    auto v = ParseInt64(Trim(part));
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::string Unquote(std::string_view v) {
  v = Trim(v);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
    return std::string(v.substr(1, v.size() - 2));
  return std::string(v);
}

// key="value" or key=value inside a metadata={...} attribute.
std::optional<std::string> MetadataField(std::string_view meta, std::string_view key) {
  std::size_t at = 0;
  while ((at = meta.find(key, at)) != std::string_view::npos) {
    const bool starts = at == 0 || meta[at - 1] == ' ' || meta[at - 1] == '{';
    if (starts && meta.substr(at + key.size(), 1) == "=") break;
    at += key.size();
  }
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t v = at + key.size() + 1;
  if (v < meta.size() && meta[v] == '"') {
    std::size_t end = v + 1;
    while (end < meta.size() && meta[end] != '"') end += meta[end] == '\\' ? 2 : 1;
    return std::string(meta.substr(v + 1, std::min(end, meta.size()) - v - 1));
  }
  std::size_t end = meta.find_first_of(" }", v);
  return std::string(
      meta.substr(v, end == std::string_view::npos ? std::string_view::npos : end - v));
}

// The computations an instruction calls, with the attribute that names each.
std::vector<std::pair<std::string, std::string>> CalledComputations(const HloInstr& ins) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const hlo::HloAttr& a : ins.attrs) {
    if (!hlo::CallsComputations(a.name)) continue;
    const std::string v = Unquote(a.value);  // `%f`, `"f"` or `{%f, %g}`
    std::string_view list = v;
    if (list.size() >= 2 && list.front() == '{') list = list.substr(1, list.size() - 2);
    for (std::string_view name : Split(list, ',')) {
      name = Trim(name);
      if (!name.empty() && name.front() == '%') name.remove_prefix(1);
      if (!name.empty()) out.emplace_back(std::string(a.name), std::string(name));
    }
  }
  return out;
}

// The IR values of an instruction's result leaves: consecutive ids.
struct LeafSpan {
  ValueId first = 0;
  std::size_t count = 0;
  std::vector<ValueId> ids() const {
    std::vector<ValueId> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = first + static_cast<ValueId>(i);
    return out;
  }
};
using LeafMap = StringViewMap<LeafSpan>;

class Builder {
 public:
  explicit Builder(const HloModule& m) : m_(m) {
    for (const HloComputation& c : m.computations) by_name_[std::string(c.name)] = &c;
  }

  Result<Graph> Entry() {
    const HloComputation* entry = nullptr;
    for (const HloComputation& c : m_.computations) {
      if (c.entry) entry = &c;
    }
    if (entry == nullptr) entry = &m_.computations.back();  // HLO's convention without ENTRY
    return Build(*entry, 0);
  }

 private:
  Result<Graph> Build(const HloComputation& c, int depth) {
    if (depth > kMaxCallDepth) return MakeError("computations call each other more than 32 deep");
    Graph g{std::string(c.name)};
    g.Reserve(c.instrs.size() + 8, c.instrs.size());
    LeafMap leaves(c.instrs.size());
    // Declare every instruction's outputs first: operands may be defined further down.
    for (const HloInstr& ins : c.instrs) {
      auto [slot, inserted] = leaves.TryEmplace(ins.name);
      if (!inserted) {
        return MakeError(std::to_string(ins.line) + ":" + std::to_string(ins.column) +
                         ": instruction `" + std::string(ins.name) + "` is defined twice");
      }
      std::vector<TensorType> types;
      Leaves(ins.shape, types);
      const bool is_param = ins.opcode == "parameter";
      *slot = {static_cast<ValueId>(g.values().size()), types.size()};
      for (std::size_t i = 0; i < types.size(); ++i) {
        std::string name = types.size() == 1 ? std::string(ins.name)
                                             : std::string(ins.name) + "#" + std::to_string(i);
        g.AddValue(std::move(name), std::move(types[i]),
                   is_param ? ValueOrigin::kGraphInput : ValueOrigin::kNodeOutput);
      }
    }
    // Parameters in parameter-number order are the graph's inputs.
    std::vector<std::pair<std::int64_t, const HloInstr*>> params;
    for (const HloInstr& ins : c.instrs) {
      if (ins.opcode != "parameter") continue;
      auto n = ins.operands.empty() ? std::nullopt : ParseInt64(ins.operands[0]);
      params.emplace_back(n.value_or(static_cast<std::int64_t>(params.size())), &ins);
    }
    std::stable_sort(params.begin(), params.end());
    for (const auto& [n, ins] : params) {
      for (ValueId v : leaves[ins->name].ids()) g.AddInput(v);
    }
    const HloInstr* root = nullptr;
    for (const HloInstr& ins : c.instrs) {
      if (ins.root) root = &ins;
      if (ins.opcode == "parameter") continue;
      if (++nodes_ > kMaxNodes) return MakeError("the module expands to more than 5 million nodes");
      if (auto made = MakeNode(g.NewNode(), ins, leaves, depth); !made) return made.error();
    }
    if (root == nullptr && !c.instrs.empty()) root = &c.instrs.back();
    if (root != nullptr) {
      for (ValueId v : leaves[root->name].ids()) g.AddOutput(v);
    }
    if (auto fin = g.Finalize(); !fin)
      return MakeError("computation `" + std::string(c.name) + "`: " + fin.error().message);
    return g;
  }

  Result<Ok> MakeNode(Node& n, const HloInstr& ins, const LeafMap& leaves, int depth) {
    n.name = ins.name;
    n.domain = "hlo";
    n.op_type = ins.opcode;
    n.kind = HloOpKind(ins.opcode).value_or(OpKind::kUnknown);
    n.loc.line = 0;
    n.outputs = leaves.Find(ins.name)->ids();
    if (ins.opcode != "constant" && ins.opcode != "iota") {
      for (std::string_view op : ins.operands) {
        const LeafSpan* span = leaves.Find(op);
        if (span == nullptr) {
          return MakeError(std::to_string(ins.line) + ":" + std::to_string(ins.column) + ": `" +
                           std::string(ins.name) + "` uses `" + std::string(op) +
                           "`, which this computation does not define");
        }
        for (std::size_t i = 0; i < span->count; ++i)
          n.inputs.push_back(span->first + static_cast<ValueId>(i));
      }
    }
    if (ins.opcode == "get-tuple-element") SelectTupleElement(ins, n);
    CopyAttrs(ins, n);
    for (const auto& [attr, callee] : CalledComputations(ins)) {
      auto it = by_name_.find(callee);
      if (it == by_name_.end()) {
        return MakeError(std::to_string(ins.line) + ":" + std::to_string(ins.column) + ": `" +
                         std::string(ins.name) + "` calls `" + std::string(callee) +
                         "`, which the module does not define");
      }
      auto sub = Called(*it->second, depth + 1);
      if (!sub) return sub.error();
      n.subgraphs.push_back({attr, *sub});
    }
    return Ok{};
  }

  // get-tuple-element reads the leaves of one element of its operand's tuple.
  static void SelectTupleElement(const HloInstr& ins, Node& n) {
    const hlo::HloAttr* index = ins.Attr("index");
    auto i = index ? ParseInt64(Trim(index->value)) : std::nullopt;
    if (!i || *i < 0 || static_cast<std::size_t>(*i) >= n.inputs.size()) return;
    // With nested tuples an element spans several leaves: take as many as the result has.
    const std::size_t width = n.outputs.size();
    const std::size_t first =
        std::min<std::size_t>(static_cast<std::size_t>(*i), n.inputs.size() - width);
    std::vector<ValueId> picked(n.inputs.begin() + static_cast<std::ptrdiff_t>(first),
                                n.inputs.begin() + static_cast<std::ptrdiff_t>(first + width));
    n.inputs = std::move(picked);
  }

  void CopyAttrs(const HloInstr& ins, Node& n) {
    for (const hlo::HloAttr& a : ins.attrs) {
      if (a.name == "metadata") {
        if (auto op = MetadataField(a.value, "op_name")) n.loc.scope = *op;
        if (auto file = MetadataField(a.value, "source_file")) n.loc.file = *file;
        if (auto line = MetadataField(a.value, "source_line"))
          n.loc.line = static_cast<int>(ParseInt64(*line).value_or(0));
        if (auto frame = MetadataField(a.value, "stack_frame_id"); frame && n.loc.file.empty()) {
          auto it = m_.stack_frames.find(static_cast<long>(ParseInt64(*frame).value_or(-1)));
          if (it != m_.stack_frames.end()) {
            n.loc.file = it->second.file;
            n.loc.line = it->second.line;
          }
        }
        continue;
      }
      if (a.name == "backend_config" || a.name == "frontend_attributes" || a.name == "sharding" ||
          a.name == "operand_layout_constraints" || a.name == "output_to_operand_aliasing") {
        continue;
      }
      if (auto ints = IntList(a.value)) {
        n.attrs.push_back({std::string(a.name), *ints});
      } else if (auto v = ParseInt64(Trim(a.value))) {
        n.attrs.push_back({std::string(a.name), *v});
      } else {
        n.attrs.push_back({std::string(a.name), Unquote(a.value)});
      }
    }
  }

  // Each called computation is built once and shared by every instruction that calls it.
  Result<std::shared_ptr<Graph>> Called(const HloComputation& c, int depth) {
    if (auto it = built_.find(c.name); it != built_.end()) return it->second;
    auto g = Build(c, depth);
    if (!g) return g.error();
    auto shared = std::make_shared<Graph>(std::move(*g));
    built_.emplace(c.name, shared);
    return shared;
  }

  const HloModule& m_;
  std::map<std::string, const HloComputation*, std::less<>> by_name_;
  std::map<std::string, std::shared_ptr<Graph>, std::less<>> built_;
  std::size_t nodes_ = 0;
};

}  // namespace

std::string hlo::AtFile(const std::string& file, const std::string& message) {
  const bool positioned = !message.empty() && message[0] >= '0' && message[0] <= '9';
  return file + (positioned ? ":" : ": ") + message;
}

Result<Graph> hlo::BuildHloGraph(const HloModule& module) {
  if (module.computations.empty()) return MakeError("the module has no computations");
  Builder builder(module);
  auto g = builder.Entry();
  if (g) g->set_partitions(module.partitions);
  return g;
}

Framework hlo::FrameworkOfModuleName(std::string_view name) {
  if (name.starts_with("@")) name.remove_prefix(1);
  if (name.starts_with("jit_") || name.starts_with("pjit_") || name.starts_with("xmap_"))
    return Framework::kJax;
  if (name.starts_with("SyncTensorsGraph") || name.starts_with("IrToHlo"))
    return Framework::kPyTorch;
  if (name.starts_with("a_inference_") || name.starts_with("cluster_") ||
      name.starts_with("__inference_"))
    return Framework::kTensorFlow;
  return Framework::kUnknown;
}

std::string HloModuleProtoTextError(const Source& source) {
  std::string form = hlo::ProtoTextForm(source.bytes);
  return form.empty() ? form : source.display_name + ": " + form;
}

int SniffHlo(const Source& source) {
  const std::string_view head = std::string_view(source.bytes).substr(0, 4096);
  for (std::size_t at = head.find("HloModule"); at != std::string_view::npos;
       at = head.find("HloModule", at + 9)) {
    const std::size_t line = head.rfind('\n', at);
    const std::size_t from = line == std::string_view::npos ? 0 : line + 1;
    if (Trim(head.substr(from, at - from)).empty()) return 90;  // not in a `// CHECK:` comment
  }
  if (head.find("ENTRY") != std::string_view::npos &&
      head.find(" parameter(") != std::string_view::npos)
    return 70;
  const std::string& n = source.display_name;
  if (n.size() > 4 &&
      (n.compare(n.size() - 4, 4, ".hlo") == 0 || n.find(".hlo.") != std::string::npos))
    return 40;
  return 0;
}

namespace {

Result<LoadedModel> LoadHloUnannotated(const Source& source, const ShapeOptions& options) {
  const std::string& name = source.display_name;
  if (source.bytes.find('\0') != std::string::npos)
    return MakeError(name + ": binary data, expected HLO text");
  auto module = hlo::ParseHloText(source.bytes);
  if (!module) return MakeError(hlo::AtFile(name, module.error().message));
  auto graph = hlo::BuildHloGraph(*module);
  if (!graph) return MakeError(hlo::AtFile(name, graph.error().message));
  LoadedModel loaded{std::move(*graph), "hlo", "", {}, {}};
  loaded.graph.mutable_facts().framework = hlo::FrameworkOfModuleName(module->name);
  loaded.graph.mutable_facts().xla_program = true;
  if (!options.dims.empty() || options.batch) {
    loaded.shape_notes.push_back("HLO programs have static shapes; --batch/--dim do not apply");
  }
  if (module->modules_in_file > 1) {
    loaded.shape_notes.push_back(
        "the file holds more modules after `// -----`; only the first was read");
  }
  return loaded;
}

}  // namespace

Result<LoadedModel> LoadHlo(const Source& source, const ShapeOptions& options) {
  return WithOpSupport(LoadHloUnannotated(source, options));
}

}  // namespace tpudoctor

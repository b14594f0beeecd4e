// Shapes of HLO instructions written without one. XLA's parser lets a test or a hand-written
// module omit the result shape of many opcodes (`ROOT out = add(p0, p1)`) and infers it with
// ShapeInference; nested operands (`add(f32[4] parameter(0), ...)`) and compact tuple elements
// (`%t#1`) leave shapes to infer too. Each opcode's rule is the shape_rule column of
// data/hlo/opcodes.tsv; this file applies it.
#include <map>
#include <optional>
#include <set>
#include <string>

#include "src/frontends/hlo/hlo_ast.h"
#include "tpudoctor/knowledge/hlo_ops.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::hlo {
namespace {

// `{1,0}` → {1, 0}; nullopt when the attribute is absent or not a flat int list.
std::optional<std::vector<std::int64_t>> Ints(const HloInstr& ins, std::string_view attr) {
  const HloAttr* a = ins.Attr(attr);
  if (a == nullptr) return std::nullopt;
  std::string_view raw = Trim(a->value);
  if (raw.size() < 2 || raw.front() != '{' || raw.back() != '}') return std::nullopt;
  std::vector<std::int64_t> out;
  for (std::string_view part : Split(raw.substr(1, raw.size() - 2), ',')) {
    if (Trim(part).empty()) continue;
    auto v = ParseInt64(Trim(part));
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

bool Contains(const std::vector<std::int64_t>& list, std::size_t v) {
  for (std::int64_t x : list) {
    if (x == static_cast<std::int64_t>(v)) return true;
  }
  return false;
}

bool IsArray(const HloShape* s) { return s != nullptr && !s->is_tuple && !s->is_token; }

// The computation an attribute names: `%f`, `f`, `"f"`, or the first of `{%f, %g}`.
std::string CalleeName(const HloInstr& ins, std::string_view attr) {
  const HloAttr* a = ins.Attr(attr);
  if (a == nullptr) return {};
  std::string_view v = Trim(a->value);
  if (v.starts_with('{')) v = Trim(v.substr(1, v.find_first_of(",}") - 1));
  if (v.starts_with('"')) v = v.substr(1, v.find('"', 1) - 1);
  if (v.starts_with('%')) v.remove_prefix(1);
  return std::string(v);
}

DType RealOf(DType t) {
  if (t == DType::kComplex64) return DType::kFloat32;
  if (t == DType::kComplex128) return DType::kFloat64;
  return t;
}

DType ComplexOf(DType t) { return t == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64; }

class Inference {
 public:
  explicit Inference(HloModule& m) : m_(m) {
    for (HloComputation& c : m.computations) computations_[std::string(c.name)] = &c;
  }

  Result<Ok> Run() {
    // Passes until nothing more can be inferred: an operand or a called computation's root may
    // come later in the text.
    for (bool progress = true; progress;) {
      progress = false;
      for (HloComputation& c : m_.computations) progress |= Pass(c);
    }
    for (const HloComputation& c : m_.computations) {
      for (const HloInstr& ins : c.instrs) {
        if (!ins.shape_given && !done_.contains(&ins)) return Unresolved(ins);
      }
    }
    return Ok{};
  }

 private:
  bool Pass(HloComputation& c) {
    std::map<std::string_view, const HloShape*> known;
    for (const HloInstr& ins : c.instrs) {
      if (ins.shape_given || done_.contains(&ins)) known[ins.name] = &ins.shape;
    }
    bool progress = false;
    for (HloInstr& ins : c.instrs) {
      if (ins.shape_given || done_.contains(&ins)) continue;
      std::vector<const HloShape*> operands;
      for (std::string_view op : ins.operands) {
        auto it = known.find(op);
        operands.push_back(it == known.end() ? nullptr : it->second);
      }
      if (auto shape = Infer(ins, operands)) {
        ins.shape = std::move(*shape);
        done_.insert(&ins);
        known[ins.name] = &ins.shape;
        progress = true;
      }
    }
    return progress;
  }

  // The root's shape of a computation, once known.
  const HloShape* RootOf(const std::string& name) const {
    auto it = computations_.find(name);
    if (it == computations_.end() || it->second->instrs.empty()) return nullptr;
    const HloInstr* root = &it->second->instrs.back();
    for (const HloInstr& ins : it->second->instrs) {
      if (ins.root) root = &ins;
    }
    return root->shape_given || done_.contains(root) ? &root->shape : nullptr;
  }

  static bool AllKnown(const std::vector<const HloShape*>& operands, std::size_t at_least) {
    if (operands.size() < at_least) return false;
    for (const HloShape* s : operands) {
      if (s == nullptr) return false;
    }
    return true;
  }

  std::optional<HloShape> Infer(const HloInstr& ins, const std::vector<const HloShape*>& ops) {
    switch (HloShapeRuleOf(ins.opcode)) {
      case HloShapeRule::kNone:
        return std::nullopt;
      case HloShapeRule::kToken: {
        HloShape token;
        token.is_token = true;
        return token;
      }
      case HloShapeRule::kDeviceIndex: {
        HloShape index;
        index.dtype = DType::kUInt32;
        return index;
      }
      case HloShapeRule::kCall:
      case HloShapeRule::kBranch: {
        const bool call = HloShapeRuleOf(ins.opcode) == HloShapeRule::kCall;
        std::string callee = CalleeName(ins, call ? "to_apply" : "branch_computations");
        if (callee.empty() && !call) callee = CalleeName(ins, "true_computation");
        const HloShape* root = RootOf(callee);
        return root ? std::optional<HloShape>(*root) : std::nullopt;
      }
      case HloShapeRule::kTuple: {
        if (!AllKnown(ops, 0)) return std::nullopt;
        HloShape tuple;
        tuple.is_tuple = true;
        for (const HloShape* s : ops) tuple.elements.push_back(*s);
        return tuple;
      }
      default:
        break;
    }
    if (!AllKnown(ops, 1)) return std::nullopt;
    return InferFromOperands(ins, ops);
  }

  std::optional<HloShape> InferFromOperands(const HloInstr& ins,
                                            const std::vector<const HloShape*>& ops) {
    const HloShape& first = *ops[0];
    switch (HloShapeRuleOf(ins.opcode)) {
      case HloShapeRule::kSame:
      case HloShapeRule::kFirstOperand:
        return first;
      case HloShapeRule::kElementwise:
        return Widest(ops);
      case HloShapeRule::kPred: {
        auto out = Widest(ops);
        if (out) out->dtype = DType::kBool;
        return out;
      }
      case HloShapeRule::kOperand1:
        return ops.size() > 1 ? std::optional<HloShape>(*ops[1]) : std::nullopt;
      case HloShapeRule::kRealPart:
      case HloShapeRule::kComplex: {
        if (!IsArray(&first)) return std::nullopt;
        HloShape out = first;
        const bool real = HloShapeRuleOf(ins.opcode) == HloShapeRule::kRealPart;
        out.dtype = real ? RealOf(first.dtype) : ComplexOf(first.dtype);
        return out;
      }
      case HloShapeRule::kTupleElement: {
        auto index = ins.Attr("index") ? ParseInt64(Trim(ins.Attr("index")->value)) : std::nullopt;
        if (!first.is_tuple || !index || *index < 0 ||
            static_cast<std::size_t>(*index) >= first.elements.size())
          return std::nullopt;
        return first.elements[static_cast<std::size_t>(*index)];
      }
      case HloShapeRule::kDot:
        return Dot(ins, ops);
      case HloShapeRule::kConcatenate:
        return Concatenate(ins, ops);
      case HloShapeRule::kReduce:
        return Reduce(ins, ops);
      case HloShapeRule::kTranspose:
        return Transpose(ins, first);
      case HloShapeRule::kMap: {
        const HloShape* root = RootOf(CalleeName(ins, "to_apply"));
        if (root == nullptr || !IsArray(&first)) return std::nullopt;
        HloShape out = first;
        out.dtype = root->dtype;
        return out;
      }
      case HloShapeRule::kSlice:
        return Slice(ins, first);
      default:
        return std::nullopt;
    }
  }

  // The operands' common shape: the array of highest rank (a scalar operand broadcasts).
  static std::optional<HloShape> Widest(const std::vector<const HloShape*>& ops) {
    const HloShape* widest = nullptr;
    for (const HloShape* s : ops) {
      if (!IsArray(s)) return std::nullopt;
      if (widest == nullptr || s->dims.size() > widest->dims.size()) widest = s;
    }
    return *widest;
  }

  static std::optional<HloShape> Dot(const HloInstr& ins, const std::vector<const HloShape*>& ops) {
    if (ops.size() < 2 || !IsArray(ops[0]) || !IsArray(ops[1])) return std::nullopt;
    const auto none = std::vector<std::int64_t>{};
    const auto lb = Ints(ins, "lhs_batch_dims").value_or(none);
    const auto lc = Ints(ins, "lhs_contracting_dims").value_or(none);
    const auto rb = Ints(ins, "rhs_batch_dims").value_or(none);
    const auto rc = Ints(ins, "rhs_contracting_dims").value_or(none);
    const HloShape& lhs = *ops[0];
    const HloShape& rhs = *ops[1];
    HloShape out;
    out.dtype = BitsOf(rhs.dtype) > BitsOf(lhs.dtype) ? rhs.dtype : lhs.dtype;
    for (std::int64_t d : lb) {
      if (d < 0 || static_cast<std::size_t>(d) >= lhs.dims.size()) return std::nullopt;
      out.dims.push_back(lhs.dims[static_cast<std::size_t>(d)]);
    }
    for (std::size_t i = 0; i < lhs.dims.size(); ++i) {
      if (!Contains(lb, i) && !Contains(lc, i)) out.dims.push_back(lhs.dims[i]);
    }
    for (std::size_t i = 0; i < rhs.dims.size(); ++i) {
      if (!Contains(rb, i) && !Contains(rc, i)) out.dims.push_back(rhs.dims[i]);
    }
    return out;
  }

  static std::optional<HloShape> Concatenate(const HloInstr& ins,
                                             const std::vector<const HloShape*>& ops) {
    auto dims = Ints(ins, "dimensions");
    if (!dims || dims->size() != 1 || !IsArray(ops[0])) return std::nullopt;
    const auto d = static_cast<std::size_t>((*dims)[0]);
    HloShape out = *ops[0];
    if (d >= out.dims.size() || !out.dims[d].is_static()) return std::nullopt;
    std::int64_t total = 0;
    for (const HloShape* s : ops) {
      if (!IsArray(s) || d >= s->dims.size() || !s->dims[d].is_static()) return std::nullopt;
      total += s->dims[d].value();
    }
    out.dims[d] = Dim::Static(total);
    return out;
  }

  // reduce(inputs..., inits...): the inputs' dims without the reduced ones, the inits' types.
  static std::optional<HloShape> Reduce(const HloInstr& ins,
                                        const std::vector<const HloShape*>& ops) {
    auto reduced = Ints(ins, "dimensions");
    if (!reduced || ops.size() % 2 != 0) return std::nullopt;
    const std::size_t n = ops.size() / 2;
    HloShape tuple;
    tuple.is_tuple = true;
    for (std::size_t i = 0; i < n; ++i) {
      if (!IsArray(ops[i]) || !IsArray(ops[n + i])) return std::nullopt;
      HloShape out;
      out.dtype = ops[n + i]->dtype;
      for (std::size_t d = 0; d < ops[i]->dims.size(); ++d) {
        if (!Contains(*reduced, d)) out.dims.push_back(ops[i]->dims[d]);
      }
      tuple.elements.push_back(std::move(out));
    }
    if (n == 1) return tuple.elements[0];
    return tuple;
  }

  static std::optional<HloShape> Transpose(const HloInstr& ins, const HloShape& in) {
    auto perm = Ints(ins, "dimensions");
    if (!perm || !IsArray(&in) || perm->size() != in.dims.size()) return std::nullopt;
    HloShape out = in;
    out.dynamic.clear();
    for (std::size_t i = 0; i < perm->size(); ++i) {
      const auto from = static_cast<std::size_t>((*perm)[i]);
      if (from >= in.dims.size()) return std::nullopt;
      out.dims[i] = in.dims[from];
    }
    return out;
  }

  // slice={[0:2], [1:7:2]}: ceil((limit - start) / stride) per dim.
  static std::optional<HloShape> Slice(const HloInstr& ins, const HloShape& in) {
    const HloAttr* a = ins.Attr("slice");
    if (a == nullptr || !IsArray(&in)) return std::nullopt;
    HloShape out = in;
    out.dynamic.clear();
    std::size_t d = 0;
    for (std::size_t open = a->value.find('['); open != std::string_view::npos;
         open = a->value.find('[', open + 1), ++d) {
      const std::size_t close = a->value.find(']', open);
      if (close == std::string_view::npos || d >= out.dims.size()) return std::nullopt;
      std::vector<std::int64_t> bounds;
      for (std::string_view part : Split(a->value.substr(open + 1, close - open - 1), ':')) {
        auto v = ParseInt64(Trim(part));
        if (!v) return std::nullopt;
        bounds.push_back(*v);
      }
      if (bounds.size() < 2 || bounds.size() > 3) return std::nullopt;
      const std::int64_t stride = bounds.size() == 3 ? bounds[2] : 1;
      if (stride <= 0 || bounds[1] < bounds[0]) return std::nullopt;
      out.dims[d] = Dim::Static((bounds[1] - bounds[0] + stride - 1) / stride);
    }
    if (d != out.dims.size()) return std::nullopt;
    return out;
  }

  static Error Unresolved(const HloInstr& ins) {
    const std::string where = std::to_string(ins.line) + ":" + std::to_string(ins.column) + ": ";
    const std::string what = "`" + std::string(ins.name) + "` (" + std::string(ins.opcode) + ")";
    if (HloShapeRuleOf(ins.opcode) == HloShapeRule::kNone) {
      return MakeError(where + what +
                       " is written without a shape, and its shape cannot be inferred from its "
                       "operands: write it (`f32[...] " +
                       std::string(ins.opcode) + "(...)`)");
    }
    return MakeError(where + what +
                     " is written without a shape, and its operands or attributes do not give "
                     "one: write its shape");
  }

  HloModule& m_;
  std::map<std::string, const HloComputation*, std::less<>> computations_;
  std::set<const HloInstr*> done_;
};

}  // namespace

Result<Ok> InferMissingShapes(HloModule& module) { return Inference(module).Run(); }

}  // namespace tpudoctor::hlo

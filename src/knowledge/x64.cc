#include "tpudoctor/knowledge/x64.h"

#include <map>
#include <vector>

#include "tpudoctor/knowledge/hlo_ops.h"
#include "tpudoctor/support/embedded.h"

namespace tpudoctor {

const Float64Path& Float64PathOf(Framework framework) {
  static const auto* table = [] {
    auto* t = new std::map<std::string, Float64Path, std::less<>>();
    for (const auto& r : EmbeddedTsvRows("data/x64/frameworks.tsv")) {
      if (r.size() >= 4)
        t->emplace(std::string(r[0]),
                   Float64Path{std::string(r[1]), std::string(r[2]), std::string(r[3])});
    }
    return t;
  }();
  if (auto it = table->find(NameOf(framework)); it != table->end()) return it->second;
  return table->at("unknown");
}

namespace {

bool IsInt64(DType t) { return t == DType::kInt64 || t == DType::kUInt64; }

std::vector<const Value*> ValuesOf(const Graph& g, const Node& n) {
  std::vector<const Value*> out;
  for (const auto* list : {&n.inputs, &n.outputs}) {
    for (ValueId v : *list) {
      if (v != kNoValue) out.push_back(&g.value(v));
    }
  }
  return out;
}

// `float64_int64`: the float64 side of a float64 <-> 64-bit integer reinterpretation.
const Value* Float64AgainstInt64(const Graph& g, const Node& n) {
  const Value* f64 = nullptr;
  bool int64 = false;
  for (const Value* v : ValuesOf(g, n)) {
    if (v->type.dtype == DType::kFloat64 && f64 == nullptr) f64 = v;
    int64 |= IsInt64(v->type.dtype);
  }
  return int64 ? f64 : nullptr;
}

// `tpu_kernel_64bit`: the first 64-bit value of a TPU-only custom call.
const Value* TpuKernel64Bit(const Graph& g, const Node& n) {
  std::optional<std::string> target = n.StringAttr("custom_call_target");
  if (!target) target = n.StringAttr("call_target_name");
  if (!target || LookupCustomCall(*target).platform != CallPlatform::kTpuOnly) return nullptr;
  for (const Value* v : ValuesOf(g, n)) {
    if (v->type.dtype == DType::kFloat64 || IsInt64(v->type.dtype)) return v;
  }
  return nullptr;
}

}  // namespace

std::optional<X64RewriteGap> X64RewriteGapOf(const Graph& graph, const Node& node) {
  enum class When { kFloat64Int64, kTpuKernel64Bit, kNever };
  struct Row {
    std::string domain, op, qualified;  // qualified: "domain.op", as a framework op may name it
    When when;
    X64RewriteGap gap;
  };
  static const auto* rows = [] {
    auto* t = new std::vector<Row>();
    for (const auto& r : EmbeddedTsvRows("data/x64/rewrite_gaps.tsv")) {
      if (r.size() >= 5)
        t->push_back({std::string(r[0]), std::string(r[1]),
                      std::string(r[0]) + "." + std::string(r[1]),
                      r[2] == "float64_int64"      ? When::kFloat64Int64
                      : r[2] == "tpu_kernel_64bit" ? When::kTpuKernel64Bit
                                                   : When::kNever,
                      X64RewriteGap{std::string(r[3]), std::string(r[4]), nullptr}});
    }
    return t;
  }();
  for (const Row& row : *rows) {
    const bool same_op = node.domain == row.domain && node.op_type == row.op;
    const bool translated_from = node.framework_op == row.op || node.framework_op == row.qualified;
    if (!same_op && !translated_from) continue;
    const Value* wide = row.when == When::kFloat64Int64     ? Float64AgainstInt64(graph, node)
                        : row.when == When::kTpuKernel64Bit ? TpuKernel64Bit(graph, node)
                                                            : nullptr;
    if (wide == nullptr) return std::nullopt;
    X64RewriteGap gap = row.gap;
    gap.value = wide;
    return gap;
  }
  return std::nullopt;
}

}  // namespace tpudoctor

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

// A custom call that cannot run on a TPU at all (a CPU or GPU library, a host callback): rule
// XLA001 or XLA002 reports it, and its 64-bit operands are not the problem.
bool NeverOnTpu(const Node& node) {
  std::optional<std::string> target = node.StringAttr("custom_call_target");
  if (!target) target = node.StringAttr("call_target_name");
  if (!target) return false;
  switch (LookupCustomCall(*target).platform) {
    case CallPlatform::kCpuOnly:
    case CallPlatform::kGpuOnly:
    case CallPlatform::kGpuInternal:
    case CallPlatform::kHostCallback:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<X64RewriteGap> X64RewriteGapOf(const Node& node) {
  struct Row {
    std::string domain, op;
    X64RewriteGap gap;
  };
  static const auto* rows = [] {
    auto* t = new std::vector<Row>();
    for (const auto& r : EmbeddedTsvRows("data/x64/rewrite_gaps.tsv")) {
      if (r.size() >= 4)
        t->push_back({std::string(r[0]), std::string(r[1]),
                      X64RewriteGap{std::string(r[2]), std::string(r[3])}});
    }
    return t;
  }();
  for (const Row& row : *rows) {
    const bool same_op = node.domain == row.domain && node.op_type == row.op;
    const bool translated_from =
        node.framework_op == row.op || node.framework_op == row.domain + "." + row.op;
    if (!same_op && !translated_from) continue;
    if (NeverOnTpu(node)) return std::nullopt;
    return row.gap;
  }
  return std::nullopt;
}

}  // namespace tpudoctor

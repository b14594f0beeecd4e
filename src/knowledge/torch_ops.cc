#include "tpudoctor/knowledge/torch_ops.h"

#include <map>
#include <set>

#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

const std::map<std::string, AtenOpInfo, std::less<>>& Table() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, AtenOpInfo, std::less<>>();
    for (const auto& cols : EmbeddedTsvRows("data/torch/aten_ops.tsv")) {
      if (cols.size() < 4) continue;
      AtenOpInfo op;
      op.canonical = cols[1] == "-" ? "" : std::string(cols[1]);
      op.info.kind = ParseOpKind(cols[2]).value_or(OpKind::kUnknown);
      op.info.support = ParseOpSupport(cols[3]).value_or(OpSupport::kUnknownOp);
      if (cols.size() > 4) op.info.reason = std::string(cols[4]);
      t->emplace(std::string(cols[0]), std::move(op));
    }
    return t;
  }();
  return *table;
}

const std::set<std::string, std::less<>>& Lowered() {
  static const auto* lowered = [] {
    auto* s = new std::set<std::string, std::less<>>();
    for (const auto& cols : EmbeddedTsvRows("data/torch/torch_xla_lowered.txt")) {
      s->emplace(Trim(cols[0]));
    }
    return s;
  }();
  return *lowered;
}

}  // namespace

std::string_view AtenPacket(std::string_view op) { return op.substr(0, op.find('.')); }

AtenOpInfo LookupAtenOp(std::string_view op) {
  const std::string_view packet = AtenPacket(op);
  auto it = Table().find(packet);
  if (it != Table().end()) return it->second;
  // ATen names the in-place variant of an op with a trailing underscore (`relu_`, `add_`);
  // PyTorch/XLA functionalizes it into the out-of-place op, so it lowers as that op does. Dunder
  // names (`__and__`) are not in-place variants.
  if (packet.size() > 1 && packet.back() == '_' && !packet.ends_with("__")) {
    const std::string_view functional = packet.substr(0, packet.size() - 1);
    if (auto f = Table().find(functional); f != Table().end()) return f->second;
    if (Lowered().count(functional) > 0) {
      AtenOpInfo lowered;
      lowered.info.support = OpSupport::kOk;
      return lowered;
    }
  }
  // Not one tpu-doctor models: PyTorch/XLA either lowers it or runs it on the CPU.
  const std::string_view overload =
      op.size() > packet.size() ? op.substr(packet.size() + 1) : std::string_view();
  const bool lowered =
      Lowered().count(packet) > 0 || (!overload.empty() && Lowered().count(std::string(op)) > 0);
  AtenOpInfo out;
  out.info.kind = OpKind::kUnknown;
  if (lowered) {
    out.info.support = OpSupport::kOk;
    return out;
  }
  out.info.support = OpSupport::kHostFallback;
  out.info.reason =
      "PyTorch/XLA has no lowering for it (codegen/xla_native_functions.yaml); unless PyTorch "
      "decomposes it first, it runs on the CPU through xla_fallback and copies tensors to and from "
      "the TPU";
  return out;
}

}  // namespace tpudoctor

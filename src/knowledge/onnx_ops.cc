#include "tpudoctor/knowledge/onnx_ops.h"

#include <map>

#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

const std::map<std::string, OpInfo, std::less<>>& DefaultDomainTable() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, OpInfo, std::less<>>();
    for (const auto& cols : EmbeddedTsvRows("data/onnx/ops.tsv")) {
      if (cols.size() < 3) continue;
      OpInfo info;
      info.kind = ParseOpKind(cols[1]).value_or(OpKind::kUnknown);
      info.support = ParseOpSupport(cols[2]).value_or(OpSupport::kUnknownOp);
      if (cols.size() > 3) info.reason = std::string(cols[3]);
      t->emplace(std::string(cols[0]), std::move(info));
    }
    return t;
  }();
  return *table;
}

}  // namespace

OpInfo LookupOnnxOp(std::string_view domain, std::string_view op_type) {
  if (domain.empty() || domain == "ai.onnx") {
    const auto& table = DefaultDomainTable();
    auto it = table.find(op_type);
    if (it != table.end()) return it->second;
    return {OpKind::kUnknown,
            OpSupport::kUnknownOp,
            "not an operator of the ONNX default domain (onnx 1.23)",
            {}};
  }
  if (domain == "ai.onnx.ml") {
    return {OpKind::kOther,
            OpSupport::kUnsupported,
            "classic-ML operators (ai.onnx.ml) have no lowering to XLA in onnx-mlir or torch-mlir; "
            "run this part on the host",
            {}};
  }
  if (domain == "ai.onnx.preview.training") {
    return {OpKind::kOther,
            OpSupport::kUnsupported,
            "training-preview operators are not lowered by any ONNX-to-XLA converter; train in the "
            "framework (JAX, PyTorch/XLA, TensorFlow) instead",
            {}};
  }
  if (domain == "com.microsoft") {
    return {
        OpKind::kUnknown,
        OpSupport::kUnsupported,
        "ONNX Runtime contrib operator: an ORT-specific fusion that XLA converters do not know; "
        "export without ORT optimizations (standard ONNX ops only)",
        {}};
  }
  return {
      OpKind::kUnknown,
      OpSupport::kUnsupported,
      "custom operator domain `" + std::string(domain) +
          "`: its kernel exists only in the runtime that registered it, and XLA cannot lower it",
      {}};
}

}  // namespace tpudoctor

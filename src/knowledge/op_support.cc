#include "tpudoctor/knowledge/op_support.h"

#include "tpudoctor/knowledge/hlo_ops.h"
#include "tpudoctor/knowledge/keras_layers.h"
#include "tpudoctor/knowledge/onnx_ops.h"
#include "tpudoctor/knowledge/tf_ops.h"
#include "tpudoctor/knowledge/torch_ops.h"

namespace tpudoctor {

std::optional<OpSupport> ParseOpSupport(std::string_view s) {
  if (s == "ok") return OpSupport::kOk;
  if (s == "dynamic") return OpSupport::kDynamic;
  if (s == "control") return OpSupport::kControl;
  if (s == "container") return OpSupport::kContainer;
  if (s == "string") return OpSupport::kString;
  if (s == "fallback" || s == "host" || s == "python") return OpSupport::kHostFallback;
  if (s == "opaque") return OpSupport::kOpaque;
  if (s == "unsupported") return OpSupport::kUnsupported;
  return std::nullopt;
}

OpInfo LookupOp(std::string_view domain, std::string_view op_type) {
  if (domain == "hlo") {
    if (auto kind = HloOpKind(op_type)) return {*kind, OpSupport::kOk, ""};
    return {OpKind::kUnknown, OpSupport::kUnknownOp, "not an HLO opcode this XLA version defines"};
  }
  if (domain == "aten") return LookupAtenOp(op_type).info;
  if (domain == "keras") return LookupKerasLayer(op_type).info;
  if (domain == "tf") return LookupTfOp(op_type).info;
  return LookupOnnxOp(domain, op_type);
}

bool RunsOnHost(std::string_view domain, std::string_view op_type, std::string_view framework_op) {
  if (LookupOp(domain, op_type).support == OpSupport::kHostFallback) return true;
  if (framework_op.empty()) return false;
  if (framework_op == "Assert") return true;
  const TfOpInfo& tf = LookupTfOp(framework_op);
  return tf.known && tf.pipeline && (domain == "tf" || domain.empty());
}

}  // namespace tpudoctor

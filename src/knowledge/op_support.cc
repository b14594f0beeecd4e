#include "tpudoctor/knowledge/op_support.h"

#include "tpudoctor/knowledge/hlo_ops.h"
#include "tpudoctor/knowledge/keras_layers.h"
#include "tpudoctor/knowledge/onnx_ops.h"
#include "tpudoctor/knowledge/torch_ops.h"

namespace tpudoctor {

OpInfo LookupOp(std::string_view domain, std::string_view op_type) {
  if (domain == "hlo") {
    if (auto kind = HloOpKind(op_type)) return {*kind, OpSupport::kOk, ""};
    return {OpKind::kUnknown, OpSupport::kUnknownOp, "not an HLO opcode this XLA version defines"};
  }
  if (domain == "aten") return LookupAtenOp(op_type).info;
  if (domain == "keras") return LookupKerasLayer(op_type).info;
  return LookupOnnxOp(domain, op_type);
}

}  // namespace tpudoctor

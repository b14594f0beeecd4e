// What tpu-doctor knows about each ONNX operator: its canonical OpKind and whether it lowers to a
// static-shape XLA program. The facts live in data/onnx/ops.tsv (embedded), one row per op of
// the default domain; whole non-default domains are classified in code (ai.onnx.ml,
// ai.onnx.preview.training, com.microsoft, anything else is a custom domain).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tpudoctor/ir/op_kind.h"

namespace tpudoctor {

enum class OnnxSupport : std::uint8_t {
  kOk,           // lowers to static-shape XLA HLO
  kDynamic,      // output shape depends on tensor values (rule SHP001)
  kControl,      // If / Loop / Scan (rule CF001)
  kContainer,    // sequence / map / optional values (rule TPU003)
  kString,       // string processing (rule TPU003)
  kUnsupported,  // no XLA lowering (rule TPU003)
  kUnknownOp,    // not an operator of the default domain at all (rule TPU003)
};

struct OnnxOpInfo {
  OpKind kind = OpKind::kUnknown;
  OnnxSupport support = OnnxSupport::kUnknownOp;
  std::string reason;  // why it is not kOk; empty otherwise
};

// `domain` as written in the model ("" and "ai.onnx" are the default domain).
OnnxOpInfo LookupOnnxOp(std::string_view domain, std::string_view op_type);

}  // namespace tpudoctor

// What tpu-doctor knows about each ONNX operator: its canonical OpKind and whether it lowers to a
// static-shape XLA program. The facts live in data/onnx/ops.tsv (embedded), one row per op of
// the default domain; whole non-default domains are classified in code (ai.onnx.ml,
// ai.onnx.preview.training, com.microsoft, anything else is a custom domain).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tpudoctor/knowledge/op_support.h"

namespace tpudoctor {

// `domain` as written in the model ("" and "ai.onnx" are the default domain).
OpInfo LookupOnnxOp(std::string_view domain, std::string_view op_type);

}  // namespace tpudoctor

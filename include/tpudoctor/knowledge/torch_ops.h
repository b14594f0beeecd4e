// What tpu-doctor knows about the ATen operators of torch.export programs
// (data/torch/aten_ops.tsv and data/torch/torch_xla_lowered.txt): the canonical ONNX-domain op
// the analyses treat each one as, and whether PyTorch/XLA lowers it, falls back to the CPU, or
// meets a data-dependent shape.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tpudoctor/knowledge/op_support.h"

namespace tpudoctor {

struct AtenOpInfo {
  OpInfo info;
  std::string canonical;  // ONNX default-domain op ("MatMul"), or empty when there is none
};

// `op` is the target without `torch.ops.aten.`: "linear.default", "add.Tensor", "relu".
AtenOpInfo LookupAtenOp(std::string_view op);

// "linear.default" → "linear"; "add.Tensor" → "add".
std::string_view AtenPacket(std::string_view op);

}  // namespace tpudoctor

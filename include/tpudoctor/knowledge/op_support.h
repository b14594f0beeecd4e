// Whether an op lowers to a static-shape XLA program on a TPU, for every op vocabulary tpu-doctor
// reads: ONNX domains, HLO opcodes, ATen operators of torch.export programs, TensorFlow ops and
// Keras layers. Checks ask LookupOp(node.domain, node.op_type) and never care which table
// answered. The facts live in data/ (embedded); each table's header names its sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tpudoctor/ir/op_kind.h"

namespace tpudoctor {

enum class OpSupport : std::uint8_t {
  kOk,            // lowers to static-shape XLA HLO
  kDynamic,       // output shape depends on tensor values (rule SHP001)
  kControl,       // data-dependent control flow: If / Loop / Scan / cond (rule CF001)
  kContainer,     // sequence / map / optional values (rule TPU003)
  kString,        // string processing (rule TPU003)
  kHostFallback,  // runs, but on the host CPU: a framework fallback or a Python op (rule TPU003)
  kOpaque,        // code the file does not contain (a custom Keras layer): unchecked (rule TPU003)
  kUnsupported,   // no XLA lowering (rule TPU003)
  kUnknownOp,     // not an operator of its vocabulary at all (rule TPU003)
};

struct OpInfo {
  OpKind kind = OpKind::kUnknown;
  OpSupport support = OpSupport::kUnknownOp;
  std::string reason;  // why it is not kOk; empty otherwise
};

// The support column of the data tables: ok, dynamic, control, container, string, fallback (also
// host and python: ops that run on the host), opaque, unsupported.
std::optional<OpSupport> ParseOpSupport(std::string_view word);

// Any domain: "" / "ai.onnx" / other ONNX domains, "hlo", "aten", "keras", "tf".
OpInfo LookupOp(std::string_view domain, std::string_view op_type);

// True for ops that run on the host, never inside the compiled device step: host fallbacks,
// tf.data ops, and TensorFlow's Assert (which the TF-XLA bridge drops). `framework_op` is the
// node's own op name where the frontend kept one.
bool RunsOnHost(std::string_view domain, std::string_view op_type, std::string_view framework_op);

}  // namespace tpudoctor

// What tpu-doctor knows about XLA HLO opcodes (data/hlo/opcodes.tsv: the canonical OpKind of each)
// and custom-call targets (data/hlo/custom_calls.tsv and custom_call_prefixes.tsv: which platform
// a target exists on).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tpudoctor/ir/op_kind.h"

namespace tpudoctor {

// The kind of an HLO opcode (data/hlo/opcodes.tsv, XLA's own list) or of its async form
// (`OP-start`, `OP-update`, `OP-done`); nullopt for an opcode XLA does not define.
std::optional<OpKind> HloOpKind(std::string_view opcode);

// The HLO opcode of a StableHLO/MHLO/CHLO op (`stablehlo.dot_general` → `dot`,
// `mhlo.reduce_window` → `reduce-window`, `chlo.broadcast_add` → `add`); "return" for the ops
// that end a function or region. Ops of other dialects (`arith.`, `shape.`) keep their name.
std::string StableHloOpcode(std::string_view mlir_name);

// kGpuInternal: XLA:GPU's own rewrite of a standard op (cuBLAS gemm, cuDNN conv) in an optimized
// GPU dump; the program it came from is portable.
enum class CallPlatform : std::uint8_t {
  kPortable,
  kCpuOnly,
  kGpuOnly,
  kGpuInternal,
  kTpuOnly,
  kHostCallback,
  kUnknown
};

struct CustomCallInfo {
  CallPlatform platform = CallPlatform::kUnknown;
  std::string note;  // what the target is (library, source)
};

CustomCallInfo LookupCustomCall(std::string_view target);

}  // namespace tpudoctor

// What tpu-doctor knows about XLA HLO opcodes (data/hlo/opcodes.tsv: the canonical OpKind of each)
// and custom-call targets (data/hlo/custom_calls.tsv and custom_call_prefixes.tsv: which platform
// a target exists on).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tpudoctor/ir/op_kind.h"

namespace tpudoctor {

// nullopt for an opcode XLA does not define.
std::optional<OpKind> HloOpKind(std::string_view opcode);

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

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

// How XLA infers the result shape of an instruction its text writes without one (the shape_rule
// column of data/hlo/opcodes.tsv; XLA's hlo_parser.cc and ShapeInference).
enum class HloShapeRule : std::uint8_t {
  kNone,          // the text must give the shape
  kSame,          // operand 0's shape (unary math, copy, all-reduce, ...)
  kElementwise,   // the operands' shape, a scalar operand broadcast
  kPred,          // the operands' dims, pred (compare, is-finite)
  kOperand1,      // operand 1's shape (select, clamp)
  kRealPart,      // operand 0's dims, its real element type (real, imag)
  kComplex,       // operand 0's dims, the complex type of its element type
  kFirstOperand,  // operand 0's shape, tuples included (while, add-dependency)
  kTuple,         // a tuple of the operands' shapes
  kTupleElement,  // element `index` of operand 0's tuple
  kDot,           // batch dims, then lhs and rhs free dims (dot dimension numbers)
  kConcatenate,   // operand 0's shape, `dimensions={d}` summed over the operands
  kReduce,        // the inputs' dims without `dimensions`, the init values' types
  kTranspose,     // operand 0's dims permuted by `dimensions`
  kCall,          // the root of the called computation (`to_apply`)
  kBranch,        // the root of the first branch computation
  kToken,         // a token
  kDeviceIndex,   // u32[] (replica-id, partition-id)
  kMap,           // operand 0's dims, the element type of the mapped computation's root
  kSlice,         // operand 0's dims sliced by `slice={[start:limit:stride], ...}`
};

// The shape rule of an HLO opcode; kNone for one XLA does not define or cannot infer.
HloShapeRule HloShapeRuleOf(std::string_view opcode);

// The HLO opcode of a StableHLO/MHLO/CHLO op (`stablehlo.dot_general` → `dot`,
// `mhlo.reduce_window` → `reduce-window`, `chlo.broadcast_add` → `add`); "return" for the ops
// that end a function or region. Ops of other dialects (`arith.`, `shape.`) keep their name.
std::string StableHloOpcode(std::string_view mlir_name);

// What tpu-doctor says of a StableHLO/CHLO/MHLO op that maps to no HLO opcode (given as the
// opcode StableHloOpcode made of it; data/hlo/mlir_ops_unmapped.tsv); nullopt for other names.
std::optional<std::string> UnmappedMlirOp(std::string_view opcode);

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

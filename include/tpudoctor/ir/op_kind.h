// OpKind: the canonical category of an op, the part of its meaning that the checks and the cost
// models understand. A Node keeps its original `domain::op_type` for messages; its OpKind says
// what it does. Frontends map their op names onto these kinds from data tables
// (data/onnx/ops.tsv for ONNX); an op nobody mapped is kUnknown, which the cost models count as
// unknown rather than free.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tpudoctor {

enum class OpKind : std::uint8_t {
  kUnknown,
  kConstant,       // produces a compile-time constant
  kShapeOf,        // reads only the shape of its input (Shape, Size)
  kLayout,         // moves or views data: reshape, transpose, slice, concat, pad, split
  kCast,           // element-type conversion
  kElementwise,    // unary or n-ary pointwise math, comparisons, select
  kMatMul,         // MatMul, Gemm, Einsum contractions
  kConv,           // convolution
  kConvTranspose,  // transposed convolution
  kPool,           // windowed pooling
  kReduce,         // reductions over axes
  kNormalization,  // batch/layer/group/instance norm
  kSoftmax,        // softmax, log-softmax, hardmax
  kGather,         // gathers and index selection
  kScatter,        // scatters
  kResize,         // resampling of spatial dims
  kSortTopK,       // sorting, top-k, argmax-like selection
  kRecurrent,      // LSTM/GRU/RNN cells over time
  kControlFlow,    // If, Loop, Scan
  kRandom,         // random number generation
  kDataDependent,  // output shape depends on tensor values (NonZero, Unique, ...)
  kContainer,      // sequence/map/optional manipulation
  kString,         // string processing
  kOther,          // known op with no cost-model category (e.g. windows, DFT)
};

std::string_view NameOf(OpKind kind);
std::optional<OpKind> ParseOpKind(std::string_view name);

// Whether an op lowers to a static-shape XLA program on a TPU (the op tables in
// knowledge/op_support.h decide it; frontends record it on each node).
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

}  // namespace tpudoctor

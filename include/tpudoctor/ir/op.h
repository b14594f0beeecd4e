// Op, OpTraits and ControlFlow: the op vocabulary every analysis after the frontends reads.
//
// OpKind (op_kind.h) says what category an op belongs to. Some analyses need more: which op it
// is (the GELU matcher follows Erf, Mul and Add; the host-transfer rule looks for infeed and
// custom calls), what it costs and saves (a transcendental function, a view, what autodiff keeps
// for its gradient), and how a control-flow op feeds its regions. Frontends spell ops their own
// way (ONNX `Mul`, HLO `multiply`, TensorFlow `ParallelMapDatasetV2`); the knowledge layer maps
// every spelling onto the values below once, from data/ops/semantics.tsv, when a model is loaded
// (AnnotateOpSupport). Nothing after the frontends compares op-name strings: a test
// (tests/op_vocabulary_test.cc) fails when code outside src/frontends/ and src/knowledge/ does.
//
// To make a new op nameable, add an enumerator here and in kOpNames (src/ir/op.cc), and rows for
// its spellings to data/ops/semantics.tsv.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tpudoctor {

enum class Op : std::uint8_t {
  kOther,  // an op no analysis needs to name; its OpKind and traits still describe it
  // Pointwise math the fused-activation matchers follow.
  kAdd,
  kMul,
  kDiv,
  kErf,
  kSigmoid,
  // Values passed through unchanged (at inference, for Dropout).
  kIdentity,
  kDropout,
  // Literals and conversions.
  kConstant,  // a literal stored in the program
  kCast,      // element-type conversion
  // Matrix products with their own operand conventions.
  kMatMul,         // numpy-style matmul: batch dims broadcast, last two dims multiply
  kGemm,           // alpha * op(A) op(B) + beta * C on matrices, transA/transB attributes
  kMatMulInteger,  // integer MatMul with zero points
  kAttention,      // softmax(Q K^T * scale + mask) V as one op (ONNX opset 23)
  kDot,            // XLA dot: batch and contracting dims from dimension numbers
  kConvolution,    // XLA convolution: dims from dim_labels
  kMaxPool,
  kReduceWindow,  // XLA reduce-window: a pooling whose window is the `window` attribute
  // Per-channel normalization over the batch: in training its statistics (a pass over its input)
  // then an affine map; at inference an affine map with the running statistics.
  kBatchNorm,
  kSlice,
  kGather,
  // Ops whose output size is data (rule SHP001 says what decides it).
  kNonZero,
  kCompress,
  kUnique,
  kNonMaxSuppression,
  // XLA program structure.
  kParameter,
  kCall,
  kFusion,
  // Transfers between the device and the host or other devices.
  kCustomCall,
  kSend,
  kRecv,
  kInfeed,
  kOutfeed,
  // Control flow; ControlFlow below says how each feeds its regions.
  kIf,           // ONNX/TensorFlow If, torch.cond: a boolean picks one of two branches
  kLoop,         // ONNX Loop: a trip count and/or a condition drive a body
  kConditional,  // XLA conditional: a predicate or branch index picks a branch computation
  kWhile,        // XLA while: a condition computation drives a body over one carried value
  // Host-side ops of TensorFlow graphs.
  kPythonCall,  // a Python function called from the graph (tf.py_function, tf.numpy_function)
  kAssert,      // dropped by the TF-XLA bridge
  // tf.data datasets (the PIPE rules).
  kMapDataset,           // map without num_parallel_calls: one element at a time
  kParallelMapDataset,   // map with num_parallel_calls (its last input)
  kBatchDataset,         // batch whose last input is drop_remainder
  kBatchKeepsRemainder,  // a batch form with no drop_remainder: the last batch is partial
  kPrefetchDataset,
  kInterleaveDataset,  // interleave without num_parallel_calls
  kShuffleDataset,     // shuffle; its input 1 is the buffer size
  kFileSource,         // a dataset or op that reads files named by its string inputs
};

std::string_view NameOf(Op op);  // "mul", "parallel_map_dataset", ... (data/ops/semantics.tsv)
std::optional<Op> ParseOp(std::string_view name);

// What autodiff keeps of an op for its gradient, beyond what its OpKind implies (matrix ops keep
// their inputs, normalizations their input, softmax its output).
enum class Saves : std::uint8_t {
  kByKind,    // nothing beyond the kind's rule
  kInput,     // a nonlinear function or max pool: its input
  kOperands,  // a product or quotient of two runtime values: both
};

struct OpTraits {
  // Relabels dims without moving data: XLA makes it a bitcast, eager frameworks a view.
  bool view = false;
  // A transcendental function: about 4 FLOPs of vector/EUP work per element instead of 1.
  bool transcendental = false;
  // XLA will not duplicate it into several fusions (instruction_fusion.cc IsExpensive: division,
  // transcendental functions, powers and roots).
  bool expensive = false;
  Saves saves = Saves::kByKind;
  // A tf.data dataset op (the PIPE rules walk them).
  bool dataset = false;
};

// How a control-flow op feeds its regions (Node::subgraphs), whatever its spelling.
struct ControlFlow {
  enum class Form : std::uint8_t { kBranch, kLoop };
  Form form = Form::kBranch;
  // kBranch: the input that picks the branch (a boolean or a branch index).
  std::optional<std::size_t> selector;
  // kLoop: the inputs with the trip count and the initial condition (ONNX Loop's M and cond),
  // absent for a loop whose condition is a region (XLA while).
  std::optional<std::size_t> trip_count;
  std::optional<std::size_t> condition;
  // Indices into Node::subgraphs: the branches, or the body and the condition region.
  std::vector<std::size_t> branches;
  std::optional<std::size_t> body;
  std::optional<std::size_t> condition_region;
  // Region input i of region r is node input RegionOperand(r, i): after the selector for an If;
  // one operand per branch for an XLA conditional; the same index for a loop, whose first body
  // input (ONNX Loop's iteration counter) is fed by no operand.
  std::size_t operand_offset = 0;
  bool operand_per_branch = false;
  bool iteration_counter = false;

  // The node input that feeds input `i` of region `r`; nullopt when none does.
  std::optional<std::size_t> RegionOperand(std::size_t r, std::size_t i) const;
};

}  // namespace tpudoctor

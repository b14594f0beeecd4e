#include "tpudoctor/ir/op.h"

#include <array>
#include <utility>

namespace tpudoctor {
namespace {

constexpr std::array<std::pair<Op, std::string_view>, 47> kOpNames = {{
    {Op::kOther, "other"},
    {Op::kAdd, "add"},
    {Op::kMul, "mul"},
    {Op::kDiv, "div"},
    {Op::kErf, "erf"},
    {Op::kSigmoid, "sigmoid"},
    {Op::kIdentity, "identity"},
    {Op::kDropout, "dropout"},
    {Op::kConstant, "constant"},
    {Op::kCast, "cast"},
    {Op::kMatMul, "matmul"},
    {Op::kGemm, "gemm"},
    {Op::kMatMulInteger, "matmul_integer"},
    {Op::kAttention, "attention"},
    {Op::kDot, "dot"},
    {Op::kConvolution, "convolution"},
    {Op::kMaxPool, "max_pool"},
    {Op::kReduceWindow, "reduce_window"},
    {Op::kBatchNorm, "batch_norm"},
    {Op::kSlice, "slice"},
    {Op::kGather, "gather"},
    {Op::kNonZero, "non_zero"},
    {Op::kCompress, "compress"},
    {Op::kUnique, "unique"},
    {Op::kNonMaxSuppression, "non_max_suppression"},
    {Op::kParameter, "parameter"},
    {Op::kCall, "call"},
    {Op::kFusion, "fusion"},
    {Op::kCustomCall, "custom_call"},
    {Op::kSend, "send"},
    {Op::kRecv, "recv"},
    {Op::kInfeed, "infeed"},
    {Op::kOutfeed, "outfeed"},
    {Op::kIf, "if"},
    {Op::kLoop, "loop"},
    {Op::kConditional, "conditional"},
    {Op::kWhile, "while"},
    {Op::kPythonCall, "python_call"},
    {Op::kAssert, "assert"},
    {Op::kMapDataset, "map_dataset"},
    {Op::kParallelMapDataset, "parallel_map_dataset"},
    {Op::kBatchDataset, "batch_dataset"},
    {Op::kBatchKeepsRemainder, "batch_keeps_remainder"},
    {Op::kPrefetchDataset, "prefetch_dataset"},
    {Op::kInterleaveDataset, "interleave_dataset"},
    {Op::kShuffleDataset, "shuffle_dataset"},
    {Op::kFileSource, "file_source"},
}};

constexpr bool NamesMatchEnum() {
  for (std::size_t i = 0; i < kOpNames.size(); ++i) {
    if (static_cast<std::size_t>(kOpNames[i].first) != i) return false;
  }
  return kOpNames.size() == static_cast<std::size_t>(Op::kFileSource) + 1;
}
static_assert(NamesMatchEnum(), "kOpNames must list every Op, in enum order");

}  // namespace

std::string_view NameOf(Op op) { return kOpNames[static_cast<std::size_t>(op)].second; }

std::optional<Op> ParseOp(std::string_view name) {
  for (const auto& [op, n] : kOpNames) {
    if (n == name) return op;
  }
  return std::nullopt;
}

std::optional<std::size_t> ControlFlow::RegionOperand(std::size_t r, std::size_t i) const {
  if (iteration_counter && i == 0) return std::nullopt;
  if (operand_per_branch)
    return i == 0 ? std::optional<std::size_t>(operand_offset + r) : std::nullopt;
  return operand_offset + i;
}

}  // namespace tpudoctor

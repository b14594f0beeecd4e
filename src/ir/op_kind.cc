#include "tpudoctor/ir/op_kind.h"

#include <array>
#include <utility>

namespace tpudoctor {
namespace {

constexpr std::array<std::pair<OpKind, std::string_view>, 24> kNames = {{
    {OpKind::kUnknown, "unknown"},
    {OpKind::kConstant, "constant"},
    {OpKind::kShapeOf, "shape_of"},
    {OpKind::kLayout, "layout"},
    {OpKind::kCast, "cast"},
    {OpKind::kElementwise, "elementwise"},
    {OpKind::kMatMul, "matmul"},
    {OpKind::kConv, "conv"},
    {OpKind::kConvTranspose, "conv_transpose"},
    {OpKind::kPool, "pool"},
    {OpKind::kReduce, "reduce"},
    {OpKind::kNormalization, "normalization"},
    {OpKind::kSoftmax, "softmax"},
    {OpKind::kGather, "gather"},
    {OpKind::kScatter, "scatter"},
    {OpKind::kResize, "resize"},
    {OpKind::kSortTopK, "sort_topk"},
    {OpKind::kRecurrent, "recurrent"},
    {OpKind::kControlFlow, "control_flow"},
    {OpKind::kRandom, "random"},
    {OpKind::kDataDependent, "data_dependent"},
    {OpKind::kContainer, "container"},
    {OpKind::kString, "string"},
    {OpKind::kOther, "other"},
}};

constexpr bool NamesMatchEnum() {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (static_cast<std::size_t>(kNames[i].first) != i) return false;
  }
  return kNames.size() == static_cast<std::size_t>(OpKind::kOther) + 1;
}
static_assert(NamesMatchEnum(), "kNames must list every OpKind, in enum order");

}  // namespace

std::string_view NameOf(OpKind kind) { return kNames[static_cast<std::size_t>(kind)].second; }

std::optional<OpKind> ParseOpKind(std::string_view name) {
  for (const auto& [kind, n] : kNames) {
    if (n == name) return kind;
  }
  return std::nullopt;
}

}  // namespace tpudoctor

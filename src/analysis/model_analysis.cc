#include "tpudoctor/analysis/model_analysis.h"

#include <algorithm>
#include <unordered_set>

namespace tpudoctor {
namespace {

bool StaticInputs(const Graph& graph) {
  for (ValueId id : graph.inputs()) {
    if (!graph.value(id).type.shape.is_static()) return false;
  }
  return !graph.inputs().empty();
}

// Sets bit i of `mask` for each DType i of a value of `graph` or a graph it calls; a computation
// called from many places is read once.
void CollectDTypes(const Graph& graph, std::uint64_t& mask,
                   std::unordered_set<const Graph*>& seen) {
  if (!seen.insert(&graph).second) return;
  for (const Value& v : graph.values())
    mask |= std::uint64_t{1} << static_cast<unsigned>(v.type.dtype);
  for (const Node& n : graph.nodes()) {
    for (const Subgraph& sub : n.subgraphs) CollectDTypes(*sub.graph, mask, seen);
  }
}

std::uint64_t DTypesOf(const Graph& graph) {
  static_assert(static_cast<unsigned>(DType::kString) < 64);
  std::uint64_t mask = 0;
  std::unordered_set<const Graph*> seen;
  CollectDTypes(graph, mask, seen);
  return mask;
}

}  // namespace

ModelAnalysis::ModelAnalysis(const Graph& graph, const TargetSpec& target,
                             const StepAssumptions& step, int slice_chips)
    : graph_(graph),
      target_(target),
      dynamism_(graph),
      slice_chips_(std::max(1, slice_chips)),
      dtypes_(DTypesOf(graph)) {
  if (!StaticInputs(graph) || !dynamism_.roots().empty()) return;
  batch_ = graph.facts().batch.value_or(0);
  estimate_options_.train = step.train;
  estimate_options_.optimizer = step.optimizer;
  estimate_options_.precision = step.precision;
  estimate_options_.batch = graph.facts().StepBatch();
  if (auto e = EstimateStep(graph, target, estimate_options_)) estimate_ = std::move(*e);
  if (!estimate_ || estimate_->fits || slice_chips_ == 1 || graph.partitions() > 1) return;
  EstimateOptions sharded = estimate_options_;
  sharded.chips = slice_chips_;
  sharded.parallel = {0, slice_chips_, 1};
  if (step.train) sharded.remat = Remat::kLayer;
  if (auto e = EstimateStep(graph, target, sharded)) sharded_ = std::move(*e);
}

const std::vector<OpCost>& ModelAnalysis::op_costs() const {
  static const std::vector<OpCost> kNone;
  if (!estimate_) return kNone;
  if (!op_costs_) op_costs_ = ComputeOpCosts(graph_);
  return *op_costs_;
}

}  // namespace tpudoctor

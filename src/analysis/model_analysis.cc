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

// What the values and nodes of a graph and the graphs it calls hold, in one walk; a computation
// called from many places is read once.
struct Contents {
  std::uint64_t dtypes = 0;  // bit i: DType i occurs
  bool dataset_ops = false;
};

void Collect(const Graph& graph, Contents& contents, std::unordered_set<const Graph*>& seen) {
  if (!seen.insert(&graph).second) return;
  for (const Value& v : graph.values())
    contents.dtypes |= std::uint64_t{1} << static_cast<unsigned>(v.type.dtype);
  for (const Node& n : graph.nodes()) {
    contents.dataset_ops |= n.traits.dataset;
    for (const Subgraph& sub : n.subgraphs) Collect(*sub.graph, contents, seen);
  }
}

Contents ContentsOf(const Graph& graph) {
  static_assert(static_cast<unsigned>(DType::kString) < 64);
  Contents contents;
  std::unordered_set<const Graph*> seen;
  Collect(graph, contents, seen);
  return contents;
}

}  // namespace

ModelAnalysis::ModelAnalysis(const Graph& graph, const TargetSpec& target,
                             const StepAssumptions& step, int slice_chips)
    : graph_(graph), target_(target), dynamism_(graph), slice_chips_(std::max(1, slice_chips)) {
  const Contents contents = ContentsOf(graph);
  dtypes_ = contents.dtypes;
  dataset_ops_ = contents.dataset_ops;
  if (!StaticInputs(graph) || !dynamism_.roots().empty()) return;
  batch_ = graph.facts().batch.value_or(0);
  estimate_options_.train = step.train;
  estimate_options_.optimizer = step.optimizer;
  estimate_options_.precision = step.precision;
  estimate_options_.batch = graph.facts().StepBatch();
  cache_ = std::make_unique<EstimateCache>();
  EstimateOptions cached = estimate_options_;
  cached.cache = cache_.get();
  if (auto e = EstimateStep(graph, target, cached)) estimate_ = std::move(*e);
  if (!estimate_ || estimate_->fits || slice_chips_ == 1 || graph.partitions() > 1) return;
  EstimateOptions sharded = cached;
  sharded.chips = slice_chips_;
  sharded.parallel = {0, slice_chips_, 1};
  if (step.train) sharded.remat = Remat::kLayer;
  if (auto e = EstimateStep(graph, target, sharded)) sharded_ = std::move(*e);
}

const std::vector<OpCost>& ModelAnalysis::op_costs() const {
  static const std::vector<OpCost> kNone;
  if (!estimate_) return kNone;
  // A compiled program's estimate costs its ops at their own widths, as the rules read them.
  if (const std::vector<OpCost>* shared = cache_->FindCosts(graph_, 0)) return *shared;
  std::call_once(op_costs_once_, [&] { op_costs_ = ComputeOpCosts(graph_); });
  return op_costs_;
}

}  // namespace tpudoctor

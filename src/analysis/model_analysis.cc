#include "tpudoctor/analysis/model_analysis.h"

namespace tpudoctor {
namespace {

bool StaticInputs(const Graph& graph) {
  for (ValueId id : graph.inputs()) {
    if (!graph.value(id).type.shape.is_static()) return false;
  }
  return !graph.inputs().empty();
}

}  // namespace

ModelAnalysis::ModelAnalysis(const Graph& graph, const TargetSpec& target,
                             const StepAssumptions& step)
    : graph_(graph), target_(target), dynamism_(graph) {
  if (!StaticInputs(graph) || !dynamism_.roots().empty()) return;
  batch_ = graph.facts().batch.value_or(0);
  op_costs_ = ComputeOpCosts(graph);
  estimate_options_.train = step.train;
  estimate_options_.optimizer = step.optimizer;
  estimate_options_.precision = step.precision;
  estimate_options_.batch = graph.facts().StepBatch();
  if (auto e = EstimateStep(graph, target, estimate_options_)) estimate_ = std::move(*e);
}

}  // namespace tpudoctor

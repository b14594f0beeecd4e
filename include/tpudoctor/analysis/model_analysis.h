// ModelAnalysis: what the rules read about one model on one target, computed once before any rule
// runs: which values carry runtime data and which shapes depend on it (Dynamism), the cost of
// every op, and one step at the model's own batch (the Estimate the memory and performance rules
// judge). Analyze builds it, the checks receive it through their CheckContext, and the report
// takes its estimate; no check computes any of it again.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "tpudoctor/analysis/dynamism.h"
#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/ir/graph.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {

// How the step the rules judge runs (the flags of `check`).
struct StepAssumptions {
  bool train = false;
  Optimizer optimizer = Optimizer::kAdam;
  Precision precision = Precision::kBf16;
};

class ModelAnalysis {
 public:
  // The graph and target must outlive the analysis. `slice_chips`: the chips of the slice the
  // user named (`--target v6e-8`: 8); the rules judge one of its chips.
  ModelAnalysis(const Graph& graph, const TargetSpec& target, const StepAssumptions& step,
                int slice_chips = 1);
  ModelAnalysis(const ModelAnalysis&) = delete;
  ModelAnalysis& operator=(const ModelAnalysis&) = delete;

  const Graph& graph() const { return graph_; }
  const TargetSpec& target() const { return target_; }
  const Dynamism& dynamism() const { return dynamism_; }
  // Per NodeId of the top-level graph, at the widths the model declares; empty when there is no
  // estimate (below). Computed on first use (once, whichever rule's thread asks first): only
  // the rules that read single ops need it.
  const std::vector<OpCost>& op_costs() const;
  // The model's per-device batch (ModelFacts::batch); 0 when unknown.
  std::int64_t batch() const { return batch_; }
  // One step at the graph's shapes on the target; absent when the inputs are not static or a
  // shape depends on data (the memory and performance rules then stay silent).
  const std::optional<Estimate>& estimate() const { return estimate_; }
  // What the estimate was asked with, so an estimate of the same step is not computed twice.
  const EstimateOptions& estimate_options() const { return estimate_options_; }
  int slice_chips() const { return slice_chips_; }
  // When the step does not fit one chip of a slice of several: the same step with its parameters,
  // gradients and optimizer state sharded over the slice's chips (FSDP) and, when training,
  // per-layer rematerialisation — the first thing a user of that slice would do (MEM001).
  const std::optional<Estimate>& sharded_estimate() const { return sharded_; }
  // Whether any value of the graph or its subgraphs has this element type (the dtype rules look
  // for the origins of only the types a model has).
  bool HasDType(DType dtype) const { return (dtypes_ >> static_cast<unsigned>(dtype)) & 1u; }
  // Whether the graph or a subgraph holds a tf.data dataset op (the pipeline rules read only such
  // graphs; asked once here instead of by each of them walking every node).
  bool HasDatasetOps() const { return dataset_ops_; }

 private:
  const Graph& graph_;
  const TargetSpec& target_;
  Dynamism dynamism_;
  // What the estimates below derived from the graph (op costs, facts, fusion plan): the sharded
  // estimate and op_costs reuse it.
  std::unique_ptr<EstimateCache> cache_;
  mutable std::once_flag op_costs_once_;
  mutable std::vector<OpCost> op_costs_;
  std::int64_t batch_ = 0;
  std::optional<Estimate> estimate_;
  EstimateOptions estimate_options_;
  int slice_chips_ = 1;
  std::optional<Estimate> sharded_;
  std::uint64_t dtypes_ = 0;  // bit i: DType i occurs
  bool dataset_ops_ = false;
};

}  // namespace tpudoctor

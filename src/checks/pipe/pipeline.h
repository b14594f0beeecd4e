// Helpers for the PIPE rules: tf.data pipeline graphs (the GraphDef a dataset serializes to) seen
// through the TensorFlow frontend. Dataset ops keep their TensorFlow name in Node::framework_op.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "tpudoctor/check/check.h"
#include "tpudoctor/diag/diagnostic.h"
#include "tpudoctor/ir/graph.h"

namespace tpudoctor::pipe {

// A tf.data op (`MapDataset`, `BatchDatasetV2`, ...).
bool IsDatasetOp(const Node& n);

// True when the checked graph holds a tf.data pipeline (its top level has a dataset op).
bool IsPipelineGraph(const CheckContext& ctx);

// Calls fn(graph, node) for every dataset op of the checked graph, nested functions included.
// Both ask the analysis first whether the model has any dataset op, so a model without one is
// not walked by every pipeline rule.
void ForEachDatasetOp(const CheckContext& ctx,
                      const std::function<void(const Graph&, const Node&)>& fn);

// The value of input `i` when it is a known integer (or bool) constant.
std::optional<std::int64_t> ConstInput(const Graph& g, const Node& n, std::size_t i);
std::optional<std::int64_t> LastConstInput(const Graph& g, const Node& n);

// "`MapDataset`" when the node is named after its op, else "`MapDataset` `parse`".
std::string Named(const Node& n);

// A location for a finding at `n`.
Location At(const Graph& g, const Node& n);

}  // namespace tpudoctor::pipe

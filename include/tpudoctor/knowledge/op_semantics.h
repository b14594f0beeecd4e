// What each spelling of an op means to the analyses (data/ops/semantics.tsv): its Op, its traits,
// and for control flow how it feeds its regions. AnnotateOpSupport (op_support.h) records them on
// every node when a model is loaded; analyses read Node::op, Node::traits and Node::control.
#pragma once

#include <optional>
#include <string_view>

#include "tpudoctor/ir/graph.h"
#include "tpudoctor/ir/op.h"

namespace tpudoctor {

struct OpSemantics {
  Op op = Op::kOther;
  OpTraits traits;
};

// The traits column of data/ops/semantics.tsv (`view,expensive`, `-`); nullopt for a word that
// names no trait.
std::optional<OpTraits> ParseTraits(std::string_view column);

// The Op and traits of a node, from the vocabulary its domain names ("" / "ai.onnx", "hlo",
// "tf"); Op::kOther with no traits for a spelling the table does not list.
OpSemantics LookupSemantics(std::string_view domain, std::string_view op_type);

// How a control-flow node feeds its regions, read from its Op and its subgraphs' attribute names;
// nullopt for every other node.
std::optional<ControlFlow> ControlFlowOf(const Node& node);

// The name of input `index` of `node` when the op reads it as a shape (Reshape's `shape`, a
// TensorFlow op's compile-time-constant input: data/onnx/shape_inputs.tsv,
// data/tf/constant_inputs.tsv); empty when it is data.
std::string_view ShapeInputName(const Node& node, std::size_t index);

}  // namespace tpudoctor

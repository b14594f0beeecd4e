// What 64-bit types become on a Cloud TPU: the path each framework's float64 takes to XLA:TPU
// (data/x64/frameworks.tsv) and the ops XLA:TPU's 64-bit rewrite cannot compile
// (data/x64/rewrite_gaps.tsv). Rules TPU001 and TPU002 read them; the facts and their sources are
// in the data files.
#pragma once

#include <optional>
#include <string>

#include "tpudoctor/ir/graph.h"
#include "tpudoctor/ir/model_facts.h"

namespace tpudoctor {

struct Float64Path {
  std::string applied;  // the behaviour applied, naming the framework
  std::string fix;
  std::string source;
};

// The float64 path of a framework (the `unknown` row for Framework::kUnknown).
const Float64Path& Float64PathOf(Framework framework);

struct X64RewriteGap {
  std::string what_fails;
  std::string source;
  const Value* value = nullptr;  // the 64-bit operand or result it fails on
};

// Whether XLA:TPU's 64-bit rewrite cannot compile `node` of `graph` (matched by its op or by the
// framework op it was translated from, and the table's condition on its types).
std::optional<X64RewriteGap> X64RewriteGapOf(const Graph& graph, const Node& node);

}  // namespace tpudoctor

// Dynamism: which values of a graph are known at compile time, which carry runtime data, and
// which have a shape that depends on runtime data — and which nodes are the root causes.
//
// XLA compiles for static shapes. A shape is still static when it is written with a symbol
// (`batch`): the symbol gets a value when the program is compiled. A shape is *data-dependent*
// when it depends on tensor contents: the output of NonZero, or a Reshape whose target shape is
// computed from input values. This analysis tells the two apart by tracking, per value:
//   - runtime_data:  its contents depend on the model's input data,
//   - from_dyn_shape: its contents were computed from a data-dependent shape (Shape(x) of such x),
//   - dyn_shape:     its shape depends on runtime data.
// A node is a root cause when it makes a shape data-dependent by itself (NonZero, Unique, …, or a
// shape-determining input that carries runtime data); everything downstream is a knock-on effect,
// counted per root so reports can say "N values downstream became dynamic".
//
// Control flow: a Loop whose trip count or condition carries runtime data and that has scan
// outputs (their length is the number of iterations), or an If whose branches yield different
// shapes, is a root too; the CF001 rule reports those, SHP001 the rest.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tpudoctor/ir/graph.h"

namespace tpudoctor {

struct ValueFacts {
  bool runtime_data = false;
  bool from_dyn_shape = false;
  bool dyn_shape = false;
};

enum class RootKind : std::uint8_t {
  kDataDependentOp,    // NonZero, Unique, Compress, NonMaxSuppression
  kRuntimeShapeInput,  // a shape-determining input carries runtime data
  kDynamicLoop,        // Loop with a runtime trip count and scan outputs or growing carries
  kDivergentIf,        // If with a runtime condition whose branches yield different shapes
};

struct DynamicRoot {
  const Graph* graph = nullptr;
  std::string graph_path;  // "main", "main/loop_1.body"
  NodeId node = kNoNode;
  RootKind kind = RootKind::kDataDependentOp;
  std::string detail;  // which input, e.g. "input 1 (`shape`)"
  int downstream = 0;  // values whose shape became data-dependent because of this root
};

class Dynamism {
 public:
  // Analyses `graph` and all its subgraphs.
  explicit Dynamism(const Graph& graph);

  const ValueFacts& facts(const Graph& graph, ValueId value) const;
  const std::vector<DynamicRoot>& roots() const { return roots_; }

 private:
  void Analyse(const Graph& graph, const std::string& path,
               const std::vector<const Graph*>& scopes);
  void AnalyseNode(const Graph& graph, const Node& node, const std::string& path);
  std::vector<ValueFacts>& FactsOf(const Graph& graph);

  std::map<const Graph*, std::vector<ValueFacts>> per_graph_;  // node-based: stable references
  std::vector<DynamicRoot> roots_;
};

}  // namespace tpudoctor

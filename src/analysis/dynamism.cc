#include "tpudoctor/analysis/dynamism.h"

#include <algorithm>
#include <map>
#include <set>

#include "tpudoctor/knowledge/op_semantics.h"
#include "tpudoctor/knowledge/op_support.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

bool SameShapes(const Shape& a, const Shape& b) {
  if (!a.rank_known() || !b.rank_known() || a.rank() != b.rank()) return false;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    if (a.dim(i).is_unknown() || !(a.dim(i) == b.dim(i))) return false;
  }
  return true;
}

// The node input that feeds input `i` of subgraph `r`: what the control flow says, else the same
// index (an XLA reduce's or fusion's computation takes the operands in order).
std::optional<std::size_t> RegionOperand(const Node& node, std::size_t r, std::size_t i) {
  return node.control ? node.control->RegionOperand(r, i) : std::optional<std::size_t>(i);
}

}  // namespace

Dynamism::Dynamism(const Graph& graph) { Analyse(graph, graph.name(), {}); }

std::vector<ValueFacts>& Dynamism::FactsOf(const Graph& graph) {
  auto [it, inserted] = per_graph_.try_emplace(&graph);
  if (inserted) it->second.resize(graph.values().size());
  return it->second;
}

const ValueFacts& Dynamism::facts(const Graph& graph, ValueId value) const {
  static const ValueFacts kNone;
  auto it = per_graph_.find(&graph);
  if (it == per_graph_.end() || value < 0 || static_cast<std::size_t>(value) >= it->second.size()) {
    return kNone;
  }
  return it->second[static_cast<std::size_t>(value)];
}

void Dynamism::Analyse(const Graph& graph, const std::string& path,
                       const std::vector<const Graph*>& scopes) {
  std::vector<ValueFacts>& facts = FactsOf(graph);
  for (const Value& v : graph.values()) {
    ValueFacts& f = facts[static_cast<std::size_t>(v.id)];
    // The model's own inputs carry data; a subgraph's inputs were seeded by its node.
    if (v.origin == ValueOrigin::kGraphInput && scopes.empty()) f.runtime_data = true;
    if (v.origin != ValueOrigin::kCaptured) continue;
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      if (auto outer = (*it)->FindValue(v.name)) {
        f = this->facts(**it, *outer);
        break;
      }
    }
  }
  // Subgraph inputs (loop iteration counters, carried values) are seeded by the caller before
  // the subgraph is analysed; see AnalyseNode.
  for (NodeId id : graph.topo_order()) {
    const Node& node = graph.node(id);
    std::vector<const Graph*> inner = scopes;
    inner.push_back(&graph);
    for (std::size_t r = 0; r < node.subgraphs.size(); ++r) {
      const Subgraph& sub = node.subgraphs[r];
      std::vector<ValueFacts>& sub_facts = FactsOf(*sub.graph);
      // A region input carries the facts of the operand that feeds it; one no operand feeds (a
      // Loop's iteration counter) is a compile-time fact, not data.
      for (std::size_t i = 0; i < sub.graph->inputs().size(); ++i) {
        ValueFacts f;
        const auto operand = RegionOperand(node, r, i);
        if (ValueId outer = operand ? node.input(*operand) : kNoValue; outer != kNoValue) {
          f = FactsOf(graph)[static_cast<std::size_t>(outer)];
        }
        sub_facts[static_cast<std::size_t>(sub.graph->inputs()[i])] = f;
      }
      Analyse(*sub.graph, path + "/" + node.name + "." + sub.attr_name, inner);
    }
    AnalyseNode(graph, node, path);
  }
  // Count the knock-on values of each root found in this graph.
  for (DynamicRoot& root : roots_) {
    if (root.graph != &graph || root.downstream != 0) continue;
    std::set<ValueId> seen;
    std::vector<ValueId> work(graph.node(root.node).outputs.begin(),
                              graph.node(root.node).outputs.end());
    while (!work.empty()) {
      ValueId v = work.back();
      work.pop_back();
      for (NodeId user : graph.value(v).users) {
        for (ValueId out : graph.node(user).outputs) {
          if (facts[static_cast<std::size_t>(out)].dyn_shape && seen.insert(out).second)
            work.push_back(out);
        }
      }
    }
    root.downstream = static_cast<int>(seen.size());
  }
}

void Dynamism::AnalyseNode(const Graph& graph, const Node& node, const std::string& path) {
  std::vector<ValueFacts>& facts = FactsOf(graph);
  auto in = [&](std::size_t i) -> ValueFacts {
    ValueId v = node.input(i);
    return v == kNoValue ? ValueFacts{} : facts[static_cast<std::size_t>(v)];
  };
  ValueFacts merged;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    merged.runtime_data |= in(i).runtime_data;
    merged.from_dyn_shape |= in(i).from_dyn_shape;
    merged.dyn_shape |= in(i).dyn_shape;
  }
  // Values computed inside a subgraph flow out through the node's outputs too.
  for (const Subgraph& sub : node.subgraphs) {
    for (ValueId out : sub.graph->outputs()) {
      const ValueFacts& f = this->facts(*sub.graph, out);
      merged.runtime_data |= f.runtime_data;
      merged.from_dyn_shape |= f.from_dyn_shape;
    }
  }

  auto add_root = [&](RootKind kind, std::string detail) {
    roots_.push_back({&graph, path, node.id, kind, std::move(detail), 0});
  };
  bool root = false;
  if (node.support == OpSupport::kDynamic) {
    root = true;
    add_root(RootKind::kDataDependentOp, "");
  }
  if (!root) {
    for (std::size_t i = 0; i < node.inputs.size() && !root; ++i) {
      const std::string_view name = ShapeInputName(node, i);
      if (name.empty() || node.input(i) == kNoValue) continue;
      const ValueFacts f = in(i);
      const Value& v = graph.value(node.input(i));
      const bool folded = v.known_ints && std::all_of(v.known_ints->begin(), v.known_ints->end(),
                                                      [](const Dim& d) { return !d.is_unknown(); });
      if (f.runtime_data && !f.from_dyn_shape && !folded) {
        root = true;
        add_root(RootKind::kRuntimeShapeInput,
                 "input " + std::to_string(i) + " (`" + std::string(name) + "`)");
      }
    }
  }
  if (!root && node.op == Op::kLoop && node.control->body) {
    const Graph& body = *node.subgraphs[*node.control->body].graph;
    const std::size_t carried = node.inputs.size() >= 2 ? node.inputs.size() - 2 : 0;
    const std::size_t scans =
        body.outputs().size() > 1 + carried ? body.outputs().size() - 1 - carried : 0;
    const bool runtime_trip = node.input(0) == kNoValue || in(0).runtime_data;
    const bool runtime_cond =
        (node.input(1) != kNoValue && in(1).runtime_data) ||
        (!body.outputs().empty() && this->facts(body, body.outputs()[0]).runtime_data);
    bool growing = false;
    for (std::size_t i = 0;
         i < carried && i + 2 < body.inputs().size() && i + 1 < body.outputs().size(); ++i) {
      if (!SameShapes(body.value(body.inputs()[i + 2]).type.shape,
                      body.value(body.outputs()[i + 1]).type.shape) &&
          body.value(body.outputs()[i + 1]).type.shape.rank_known() &&
          body.value(body.inputs()[i + 2]).type.shape.rank_known()) {
        growing = true;
      }
    }
    if ((runtime_trip || runtime_cond) && (scans > 0 || growing)) {
      root = true;
      add_root(RootKind::kDynamicLoop, scans > 0 ? "scan outputs" : "loop-carried shapes change");
    }
  }
  if (!root && node.op == Op::kIf && node.subgraphs.size() == 2 && in(0).runtime_data) {
    const Graph& a = *node.subgraphs[0].graph;
    const Graph& b = *node.subgraphs[1].graph;
    bool same = a.outputs().size() == b.outputs().size();
    for (std::size_t i = 0; same && i < a.outputs().size(); ++i) {
      same = SameShapes(a.value(a.outputs()[i]).type.shape, b.value(b.outputs()[i]).type.shape);
    }
    if (!same) {
      root = true;
      add_root(RootKind::kDivergentIf, "");
    }
  }

  const bool reads_shape_only = node.kind == OpKind::kShapeOf;
  for (ValueId out : node.outputs) {
    ValueFacts& f = facts[static_cast<std::size_t>(out)];
    const Value& v = graph.value(out);
    if (reads_shape_only) {
      f.runtime_data = false;
      f.from_dyn_shape = merged.dyn_shape;
    } else if (node.kind == OpKind::kConstant && node.inputs.empty()) {
      f = ValueFacts{};
    } else {
      f.runtime_data = merged.runtime_data;
      f.from_dyn_shape = merged.from_dyn_shape;
    }
    if (reads_shape_only || node.kind == OpKind::kConstant) {
      f.dyn_shape = root;
    } else {
      f.dyn_shape = root || (merged.dyn_shape && !v.type.shape.is_static()) ||
                    (merged.from_dyn_shape && !v.type.shape.is_static() && [&] {
                      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
                        if (!ShapeInputName(node, i).empty() && in(i).from_dyn_shape) return true;
                      }
                      return false;
                    }());
    }
    // A value whose contents are fully folded at load time is a compile-time constant.
    if (v.StaticInts()) {
      f.runtime_data = false;
      f.from_dyn_shape = false;
    }
  }
}

}  // namespace tpudoctor

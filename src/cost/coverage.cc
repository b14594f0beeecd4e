// Coverage: the ops no cost model covers, and when the estimate says it is a lower bound.
#include <algorithm>

#include "src/cost/step.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

bool AllShapesStatic(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs) {
    if (v != kNoValue && !g.value(v).type.shape.is_static()) return false;
  }
  for (ValueId v : n.outputs) {
    if (!g.value(v).type.shape.is_static()) return false;
  }
  return true;
}

// Share of uncosted nodes above which the estimate says it is a lower bound ("a few percent").
constexpr double kUncostedWarnShare = 0.03;

}  // namespace

std::optional<std::string> CoverageWarning(const Estimate& e) {
  if (e.unknown_ops == 0) return std::nullopt;
  const double uncosted = 1 - e.coverage();
  if (uncosted <= kUncostedWarnShare && e.unknown_matrix_ops == 0) return std::nullopt;
  std::string out =
      Plural(e.unknown_ops, "op", "ops") + " (" + FormatFixed(uncosted * 100, 0) + "% of the graph";
  if (e.unknown_matrix_ops > 0)
    out += ", " + std::to_string(e.unknown_matrix_ops) + " of them matmuls or convolutions";
  out += ") count as zero, so step time and memory are lower bounds";
  const int no_model = e.unknown_ops - e.unknown_shape_ops;
  if (e.unknown_shape_ops > 0) {
    out += "; " + std::to_string(e.unknown_shape_ops) +
           " have shapes that depend on values computed at run time (a data-dependent op, a "
           "resize to a size derived from the input): make them static to cost them";
  }
  if (no_model > 0) {
    out += "; " + std::to_string(no_model) + " have no cost model (" +
           Join(e.no_model_kinds, ", ") +
           (no_model > static_cast<int>(e.no_model_kinds.size()) && e.no_model_kinds.size() == 4
                ? ", ..."
                : "") +
           ")";
  }
  return out;
}

// Counts what the cost model could and could not cost (the coverage figure).
void CountCoverage(const StepContext& c, Estimate& e) {
  for (NodeId id : c.graph.topo_order()) {
    const OpCost& cost = c.costs[static_cast<std::size_t>(id)];
    const Node& n = c.graph.node(id);
    if (cost.known) {
      e.costed_ops += cost.cls != CostClass::kFree;
      continue;
    }
    ++e.unknown_ops;
    e.unknown_matrix_ops += IsMatrixKind(n.kind);
    if (!AllShapesStatic(c.graph, n)) {
      ++e.unknown_shape_ops;
    } else if (const std::string op = "`" + n.QualifiedOp() + "`";
               e.no_model_kinds.size() < 4 &&
               std::ranges::find(e.no_model_kinds, op) == e.no_model_kinds.end()) {
      e.no_model_kinds.push_back(op);
    }
  }
}

}  // namespace tpudoctor

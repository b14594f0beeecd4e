#include "src/checks/pipe/pipeline.h"

#include <algorithm>

namespace tpudoctor::pipe {

bool IsDatasetOp(const Node& n) { return n.traits.dataset; }

bool IsPipelineGraph(const CheckContext& ctx) {
  return ctx.analysis.HasDatasetOps() &&
         std::ranges::any_of(ctx.graph.nodes(), [](const Node& n) { return IsDatasetOp(n); });
}

void ForEachDatasetOp(const CheckContext& ctx,
                      const std::function<void(const Graph&, const Node&)>& fn) {
  if (!ctx.analysis.HasDatasetOps()) return;
  ForEachNodeDeep(ctx.graph, [&](const Graph& graph, const Node& n) {
    if (IsDatasetOp(n)) fn(graph, n);
  });
}

std::optional<std::int64_t> ConstInput(const Graph& g, const Node& n, std::size_t i) {
  const ValueId v = n.input(i);
  if (v == kNoValue) return std::nullopt;
  const auto ints = g.value(v).StaticInts();
  if (!ints || ints->size() != 1) return std::nullopt;
  return ints->front();
}

std::optional<std::int64_t> LastConstInput(const Graph& g, const Node& n) {
  if (n.inputs.empty()) return std::nullopt;
  return ConstInput(g, n, n.inputs.size() - 1);
}

std::string Named(const Node& n) {
  const std::string op = "`" + n.QualifiedOp() + "`";
  return n.name == n.QualifiedOp() ? op : op + " `" + n.name + "`";
}

Location At(const Graph& g, const Node& n) {
  Location l;
  l.graph = g.name();
  l.node = n.name;
  l.op = n.QualifiedOp();
  l.scope = n.loc.scope;
  return l;
}

}  // namespace tpudoctor::pipe

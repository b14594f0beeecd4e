// Liveness: which activations are allocated at the same time under a memory-aware schedule (the
// analogue of XLA's heap simulator), and their peak.
#include <algorithm>
#include <map>
#include <set>

#include "src/cost/step.h"

namespace tpudoctor {
namespace {

// Per ValueId, the bytes a node's output takes in HBM when it is allocated: never for views and
// values inside a fused kernel (attention, activation), under XLA only for the values kernels
// write; nullopt for the rest and for graph inputs.
std::vector<std::optional<double>> AllocatedBytes(const StepContext& c) {
  std::vector<std::optional<double>> out(c.graph.values().size());
  for (const Node& n : c.graph.nodes()) {
    const std::size_t i = static_cast<std::size_t>(n.id);
    if (c.costs[i].cls == CostClass::kFree || InsideFusedKernel(c, i)) continue;
    for (ValueId o : n.outputs) {
      if (c.fusion && !c.written[static_cast<std::size_t>(o)]) continue;
      const Value& v = c.graph.value(o);
      out[static_cast<std::size_t>(o)] =
          LayoutBytes(v.type, c.target, c.element_bytes, c.facts.channels_minor(v));
    }
  }
  return out;
}

// Above this many nodes the text order is used as the schedule (the greedy one is quadratic in
// the width of the graph).
constexpr std::size_t kMaxScheduledNodes = 20000;

// The order a compiler's memory-aware scheduler runs the nodes in (XLA's schedulers minimise
// peak memory), approximated greedily: among the nodes whose inputs are ready, the one that
// allocates least net of what it frees, ties in text order. The same program in two text forms
// (HLO, StableHLO) gets the same schedule whatever order its text lists the ops in.
std::vector<NodeId> MemoryOrder(const StepContext& c,
                                const std::vector<std::optional<double>>& allocated) {
  const Graph& g = c.graph;
  const auto& topo = g.topo_order();
  if (topo.size() > kMaxScheduledNodes) return topo;
  std::vector<std::size_t> position(g.nodes().size());
  for (std::size_t i = 0; i < topo.size(); ++i) position[static_cast<std::size_t>(topo[i])] = i;
  auto distinct_inputs = [&](NodeId id) {
    std::vector<ValueId> in;
    for (ValueId v : g.node(id).inputs) {
      if (v != kNoValue && std::ranges::find(in, v) == in.end()) in.push_back(v);
    }
    return in;
  };
  std::vector<int> pending(g.nodes().size(), 0);
  std::vector<int> users_left(g.values().size(), 0);
  std::set<ValueId> returned(g.outputs().begin(), g.outputs().end());
  std::vector<NodeId> ready;
  for (NodeId id : topo) {
    for (ValueId v : distinct_inputs(id)) {
      ++users_left[static_cast<std::size_t>(v)];
      pending[static_cast<std::size_t>(id)] += g.value(v).producer != kNoNode;
    }
  }
  for (NodeId id : topo) {
    if (pending[static_cast<std::size_t>(id)] == 0) ready.push_back(id);
  }
  auto net_bytes = [&](NodeId id) {
    double net = 0;
    for (ValueId o : g.node(id).outputs) net += allocated[static_cast<std::size_t>(o)].value_or(0);
    for (ValueId v : distinct_inputs(id)) {
      const NodeId p = g.value(v).producer;
      if (p != kNoNode && users_left[static_cast<std::size_t>(v)] == 1 && !returned.contains(v))
        net -= allocated[static_cast<std::size_t>(v)].value_or(0);
    }
    return net;
  };
  std::vector<NodeId> order;
  order.reserve(topo.size());
  while (!ready.empty()) {
    std::size_t best = 0;
    double best_net = net_bytes(ready[0]);
    for (std::size_t r = 1; r < ready.size(); ++r) {
      const double net = net_bytes(ready[r]);
      const auto pos = [&](std::size_t k) { return position[static_cast<std::size_t>(ready[k])]; };
      if (net < best_net || (net == best_net && pos(r) < pos(best))) {
        best = r;
        best_net = net;
      }
    }
    const NodeId id = ready[best];
    ready[best] = ready.back();
    ready.pop_back();
    order.push_back(id);
    for (ValueId v : distinct_inputs(id)) --users_left[static_cast<std::size_t>(v)];
    for (ValueId o : g.node(id).outputs) {
      std::vector<NodeId> seen;
      for (NodeId u : g.value(o).users) {
        if (std::ranges::find(seen, u) != seen.end()) continue;
        seen.push_back(u);
        if (--pending[static_cast<std::size_t>(u)] == 0) ready.push_back(u);
      }
    }
  }
  return order.size() == topo.size() ? order : topo;
}

}  // namespace

// Inference activations: liveness over the schedule (a value is live from its producer to its
// last user); the peak of live bytes.
ActivationBytes LiveActivations(const StepContext& c, Estimate& e, double& largest) {
  const Graph& graph = c.graph;
  ActivationBytes a;
  std::map<ValueId, std::size_t> last_use;
  const std::vector<std::optional<double>> allocated = AllocatedBytes(c);
  const std::vector<NodeId> order = MemoryOrder(c, allocated);
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (ValueId in : graph.node(order[i]).inputs) {
      if (in != kNoValue) last_use[in] = i;
    }
  }
  for (ValueId out : graph.outputs()) last_use[out] = order.size();
  double live = 0, peak_live = 0;
  for (ValueId in : graph.inputs())
    live += LayoutBytes(graph.value(in).type, c.target, c.element_bytes,
                        c.facts.channels_minor(graph.value(in)))
                .value_or(0);
  std::multimap<std::size_t, double> frees;
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (ValueId out : graph.node(order[i]).outputs) {
      const auto& b = allocated[static_cast<std::size_t>(out)];
      if (!b) continue;
      live += *b;
      a.natural_total += TensorBytes(graph.value(out).type, c.element_bytes).value_or(0);
      a.layout_total += *b;
      largest = std::max(largest, *b);
      frees.emplace(last_use.count(out) ? last_use[out] : i, *b);
    }
    peak_live = std::max(peak_live, live);
    for (auto it = frees.begin(); it != frees.end() && it->first <= i;) {
      live -= it->second;
      it = frees.erase(it);
    }
  }
  e.memory.activations = peak_live;
  e.memory.transients = 0;
  e.components.live_peak_bytes = peak_live;
  return a;
}

}  // namespace tpudoctor

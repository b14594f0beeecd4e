#include "tpudoctor/ir/verify.h"

#include <algorithm>

namespace tpudoctor {
namespace {

void VerifyInto(const Graph& g, const std::string& where, std::vector<std::string>& problems) {
  const auto nvalues = static_cast<ValueId>(g.values().size());
  const auto nnodes = static_cast<NodeId>(g.nodes().size());
  auto bad = [&](const std::string& what) { problems.push_back(where + ": " + what); };

  for (const Value& v : g.values()) {
    if (v.producer != kNoNode) {
      if (v.producer < 0 || v.producer >= nnodes) {
        bad("value `" + v.name + "` has an out-of-range producer");
        continue;
      }
      const auto& outs = g.node(v.producer).outputs;
      if (std::find(outs.begin(), outs.end(), v.id) == outs.end()) {
        bad("value `" + v.name + "` names a producer that does not output it");
      }
    } else if (v.origin == ValueOrigin::kNodeOutput) {
      bad("value `" + v.name + "` is a node output without a producer");
    }
    for (NodeId u : v.users) {
      if (u < 0 || u >= nnodes) {
        bad("value `" + v.name + "` has an out-of-range user");
        continue;
      }
      const auto& ins = g.node(u).inputs;
      if (std::find(ins.begin(), ins.end(), v.id) == ins.end()) {
        bad("value `" + v.name + "` lists a user that does not read it");
      }
    }
  }
  std::vector<int> position(g.nodes().size(), -1);
  if (g.topo_order().size() != g.nodes().size()) bad("topological order does not cover all nodes");
  for (std::size_t i = 0; i < g.topo_order().size(); ++i) {
    NodeId id = g.topo_order()[i];
    if (id < 0 || id >= nnodes || position[static_cast<std::size_t>(id)] != -1) {
      bad("topological order is not a permutation");
      return;
    }
    position[static_cast<std::size_t>(id)] = static_cast<int>(i);
  }
  for (const Node& n : g.nodes()) {
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      if (in < 0 || in >= nvalues) {
        bad("node `" + n.name + "` reads an out-of-range value");
        continue;
      }
      NodeId p = g.value(in).producer;
      if (p != kNoNode &&
          position[static_cast<std::size_t>(p)] >= position[static_cast<std::size_t>(n.id)]) {
        bad("node `" + n.name + "` comes before the producer of its input");
      }
    }
    for (ValueId out : n.outputs) {
      if (out < 0 || out >= nvalues || g.value(out).producer != n.id) {
        bad("node `" + n.name + "` has an output it does not produce");
      }
    }
    for (const Subgraph& s : n.subgraphs) {
      if (!s.graph) {
        bad("node `" + n.name + "` has an empty subgraph");
        continue;
      }
      VerifyInto(*s.graph, where + "/" + n.name + "." + s.attr_name, problems);
    }
  }
  for (ValueId out : g.outputs()) {
    if (out < 0 || out >= nvalues) bad("graph output is out of range");
  }
}

}  // namespace

std::vector<std::string> VerifyGraph(const Graph& graph) {
  std::vector<std::string> problems;
  VerifyInto(graph, graph.name(), problems);
  return problems;
}

Result<Ok> CheckTensorSizes(const Graph& g) {
  for (const Value& v : g.values()) {
    if (v.type.kind != ValueKind::kTensor || !v.type.shape.is_static() || BitsOf(v.type.dtype) == 0)
      continue;
    const std::optional<std::int64_t> bytes = v.type.SizeInBytes();
    if (!bytes) {
      return MakeError("value `" + v.name + "` has shape " + v.type.shape.ToString() +
                       ", whose size in bytes overflows 64 bits; expected realistic dims");
    }
    if (*bytes > kMaxTensorBytes) {
      return MakeError("value `" + v.name + "` has shape " + v.type.shape.ToString() + ", " +
                       std::to_string(*bytes >> 50) +
                       " PiB, more than any machine holds; expected realistic dims");
    }
  }
  for (const Node& n : g.nodes()) {
    for (const Subgraph& sub : n.subgraphs) {
      if (auto r = CheckTensorSizes(*sub.graph); !r) return r.error();
    }
  }
  return Ok{};
}

}  // namespace tpudoctor

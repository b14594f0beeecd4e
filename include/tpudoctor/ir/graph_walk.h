// Walking a graph with its subgraphs: each node visited with the path of the graph it is in
// (`main/loop.body`), the form locations and reports name subgraphs by.
#pragma once

#include <string>

#include "tpudoctor/ir/graph.h"

namespace tpudoctor {

// The path of subgraph `sub` of `node` in the graph at `parent_path`: "parent/node.attr".
std::string GraphPath(const std::string& parent_path, const Node& node, const Subgraph& sub);

// Calls fn(graph, graph_path, node) for every node of `graph` and its subgraphs, in topological
// order, each node before the nodes of its subgraphs.
template <typename Fn>
void ForEachNodeWithPath(const Graph& graph, const std::string& path, Fn&& fn) {
  for (NodeId id : graph.topo_order()) {
    const Node& node = graph.node(id);
    fn(graph, path, node);
    for (const Subgraph& sub : node.subgraphs)
      ForEachNodeWithPath(*sub.graph, GraphPath(path, node, sub), fn);
  }
}

}  // namespace tpudoctor

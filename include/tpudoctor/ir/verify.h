// VerifyGraph: structural invariants every Graph must hold after Finalize(). Tests call it on
// every graph they build or load; a failure is a bug in the code that built the graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpudoctor/ir/graph.h"

namespace tpudoctor {

// Returns the list of broken invariants (empty when the graph is well formed): ids in range,
// each node output produced by exactly that node, users consistent with inputs, the topological
// order a permutation where producers come before users, subgraphs verified recursively.
std::vector<std::string> VerifyGraph(const Graph& graph);

// The largest tensor a model may declare: 64 PiB, thousands of times any accelerator's memory
// (and of any host's), so only a damaged or hostile file reaches it.
inline constexpr std::int64_t kMaxTensorBytes = std::int64_t{1} << 56;

// Run on every loaded graph (LoadModel does it for every format): an error when a static tensor's
// size in bytes overflows 64 bits or passes kMaxTensorBytes (dims near 2^63 in a hostile file),
// in the graph or any subgraph. One rule for every frontend.
Result<Ok> CheckTensorSizes(const Graph& graph);

}  // namespace tpudoctor

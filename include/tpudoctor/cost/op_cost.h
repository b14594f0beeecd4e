// OpCost: what one node costs — FLOPs and bytes moved — from its op kind and its tensors' shapes.
// A pure function of the graph; no target involved. An op whose cost the table cannot say is
// marked `known = false` and counted by the caller, never silently zero. Matmul-like ops also
// carry their (batch, M, N, K) so the MXU model can pad them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tpudoctor/ir/graph.h"

namespace tpudoctor {

enum class CostClass : std::uint8_t {
  kFree,    // views and compile-time work: reshape, shape arithmetic, constants
  kMatrix,  // runs on the MXU / tensor cores: matmul, conv
  kVector,  // elementwise, reductions, normalization, softmax, gathers: bandwidth-bound
  kMemory,  // pure data movement: transpose, concat, pad, slice copies
};

struct MatmulDims {
  double batch = 1;  // independent matmuls (batch dims; groups × batch for convolutions)
  double m = 0;      // rows of the output
  double n = 0;      // columns of the output
  double k = 0;      // contraction
};

// An attention op's mask, from its attributes: causal, a local window of keys before each query,
// aligned chunks a query stays within (0: none).
struct AttentionMask {
  bool causal = false;
  double window = 0;
  double chunk = 0;
};

struct OpCost {
  bool known = true;
  CostClass cls = CostClass::kFree;
  double flops = 0;
  double bytes_read = 0;
  double bytes_written = 0;
  std::optional<MatmulDims> matmul;        // for kMatrix
  std::optional<AttentionMask> attention;  // for an Attention op: m queries, n keys
};

// Forward cost of every node of the top-level graph, indexed by NodeId. Work on values known
// before the step runs (shape arithmetic, folded scalars: at most 1,024 elements, not returned)
// is free: frameworks hold it as numbers and XLA folds it. Control-flow nodes add
// their subgraphs' cost (both If branches at the larger one; a Loop's body times a static trip
// count, or unknown). `element_bytes` overrides the byte width of floating-point tensors (2 for a
// bf16 estimate of an fp32 model); 0 keeps the model's dtypes.
std::vector<OpCost> ComputeOpCosts(const Graph& graph, int element_bytes = 0);

AttentionMask AttentionMaskOf(const Node& attention);

// The share of an attention's query-key pairs (`sq` queries, `skv` keys) that its kernel
// computes. `block` 0: the pairs the mask keeps — half when causal, about window/keys when
// local. A block size: every pair of each (query block, key block) tile the mask reaches into, as
// flash/splash kernels compute them, skipping only the tiles the mask empties.
double AttentionPairShare(const AttentionMask& mask, double sq, double skv, double block = 0);

// Bytes of one tensor at `element_bytes` for floats (or its own width); nullopt unless static.
std::optional<double> TensorBytes(const TensorType& type, int element_bytes);

}  // namespace tpudoctor

// Fusion: the kernels XLA would form from a graph, so that a compiled program is costed by the
// bytes that cross each kernel's boundary instead of one HBM round trip per op.
//
// The grouping follows what XLA's fusion passes do (xla/service/instruction_fusion.cc, the GPU
// priority fusion and multi-output fusion passes, the TPU output fusion), in a simplified form:
//
// - Views cost nothing and belong to no kernel: reshapes and bitcasts, constants, tuples and
//   their elements, parameters (`FusionRole::kFree`).
// - Pointwise math, conversions, broadcasts, transposes, slices, concatenations, pads and gathers
//   fuse into the kernel that consumes them (producer-consumer fusion). A producer read by several
//   kernels is duplicated into each when it is cheap (a broadcast, a convert, a cheap pointwise
//   op); otherwise it is a kernel of its own and its result goes through HBM.
// - Reductions, softmax, normalizations, pooling and scatters are kernel roots: their producers
//   fuse into them, their consumers start a new kernel.
// - Matmuls and convolutions are roots that take layout and conversion producers (operand
//   fusion) and, with `FusionOptions::epilogue`, the pointwise consumers of their result (bias,
//   activation): XLA's TPU output fusion, cuBLAS/Triton epilogues on GPU.
// - A producer that is also a program output still fuses into its consumer (multi-output fusion).
// - Everything else (control flow, sorting, random numbers, custom calls, unknown ops) is a kernel
//   of its own that nothing fuses into.
//
// This is a judgement of what XLA does, not XLA itself: XLA also splits big reductions and
// split-K matmuls into two kernels and fuses sibling reductions; tests compare the grouping with
// optimized HLO dumps (docs/cost-model.md, "The XLA fusion model").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/ir/graph.h"

namespace tpudoctor {

enum class FusionRole : std::uint8_t {
  kFree,       // a view: no kernel, no traffic
  kFusible,    // fuses into its consumer
  kReduction,  // a root its producers fuse into
  kMatrix,     // matmul or convolution: a root with operand and epilogue fusion
  kOpaque,     // a kernel of its own
};

FusionRole RoleOf(const Node& node, const OpCost& cost);

struct FusionOptions {
  bool epilogue = true;   // pointwise consumers of a matmul/conv fuse into it
  int element_bytes = 0;  // float width for boundary bytes (0: the model's dtypes)
  // A training step: a BatchNorm normalizes with its batch's statistics, which the kernel that
  // produces its input cannot apply before all of that input is written, so it is no epilogue.
  bool train = false;
};

struct FusionKernel {
  NodeId root = kNoNode;  // the node whose result the kernel writes (the last one it computes)
  FusionRole kind = FusionRole::kFusible;  // the root's role (kFusible: a loop fusion)
  std::vector<NodeId> nodes;               // members, root included
  std::vector<NodeId> duplicated;          // cheap producers recomputed inside this kernel too
  double bytes_in = 0;                     // distinct values read from outside the kernel
  double bytes_out = 0;          // results read outside the kernel or returned by the program
  std::vector<ValueId> written;  // those results: the tensors that go through HBM
  double matrix_flops = 0;
  std::optional<MatmulDims> matmul;  // the largest matmul/conv it runs
  bool known = true;                 // false when a member's cost is unknown
};

struct FusionPlan {
  std::vector<int> kernel_of;  // per NodeId: index into kernels; -1 for views and duplicated nodes
  std::vector<FusionKernel> kernels;
};

FusionPlan PlanFusions(const Graph& graph, const std::vector<OpCost>& costs,
                       const FusionOptions& options = {});

}  // namespace tpudoctor

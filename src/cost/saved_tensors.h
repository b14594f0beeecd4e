// What reverse-mode autodiff keeps from the forward pass for the backward pass: the activation
// memory of a training step before rematerialisation. Private to src/cost.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "src/cost/graph_facts.h"
#include "tpudoctor/cost/estimate.h"

namespace tpudoctor {

struct SavedTensors {
  double saved = 0;   // bytes autograd keeps for the backward pass, each tensor once
  double matrix = 0;  // of which the inputs of matmuls and convolutions
  std::map<std::string, double> by_layer;  // saved bytes per layer (LayerKey of the keeping op)
  double natural = 0;                      // the same without TPU tile padding
  double layout = 0;
  double largest = 0;  // the largest activation tensor
};

// What reverse-mode autodiff keeps from the forward pass, op by op: a matmul or conv keeps its
// activation inputs, a nonlinearity its input, a product its runtime factors, a normalization its
// input, a softmax its output, a max-pool its input; sums, copies and reshapes keep nothing. A
// folded BatchNorm (see GraphFacts) keeps the conv output. Each tensor is counted once.
SavedTensors ComputeSavedTensors(const Graph& g, const std::vector<OpCost>& costs,
                                 const GraphFacts& facts, const Calibration& cal,
                                 const TargetSpec& target, int eb);

}  // namespace tpudoctor

// What reverse-mode autodiff keeps from the forward pass for the backward pass: the activation
// memory of a training step before rematerialisation. Private to src/cost.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "src/cost/graph_facts.h"
#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/cost/fusion.h"

namespace tpudoctor {

// The saved bytes of one part of the model and the largest tensor its ops produce (whose
// gradient is the largest buffer its backward pass adds).
struct SavedPart {
  double saved = 0;
  double largest = 0;
  // The largest tensor is read only by a loss (the logits of a language model's head): its
  // gradient is an elementwise function of it, computed after its last use.
  bool largest_feeds_loss = false;
};

struct SavedTensors {
  double saved = 0;            // bytes autograd keeps for the backward pass, each tensor once
  double matrix = 0;           // of which the inputs of matmuls and convolutions
  double mlp_down_inputs = 0;  // of those, the MLP down-projections' (GraphFacts::mlp_down)
  // Per layer (LayerKey of the keeping op); "" holds what no layer keeps before or between the
  // layers (the stem: embeddings, inputs), which lives through the whole backward pass.
  std::map<std::string, SavedPart> by_layer;
  // What no layer keeps after the last layer's ops (the output head and the loss): its backward
  // runs first, and frees it before any layer's backward starts.
  SavedPart head;
  double natural = 0;  // the same without TPU tile padding
  double layout = 0;
  double largest = 0;  // the largest activation tensor
};

// What reverse-mode autodiff keeps from the forward pass, op by op: a matmul or conv keeps its
// activation inputs, a nonlinearity its input, a product its runtime factors, a normalization its
// input, a softmax its output, a max-pool its input; sums, copies and reshapes keep nothing. A
// folded BatchNorm (see GraphFacts) keeps the conv output. Each tensor is counted once. With a
// fusion plan (a compiled runtime), a tensor its kernel does not write to memory (`written`, per
// ValueId) is recomputed in the backward pass's fusion: the kernel's inputs are kept instead.
// `weight_input_bytes` (0: `eb`) is the width a matmul with a weight operand keeps its activation
// input at (1 under fp8 where the runtime saves its quantized copy:
// Calibration::fp8_saves_quantized_inputs). `frozen` (per NodeId; empty: none) marks the weight
// matmuls LoRA froze with no adapter beside them: their backward computes the data gradient alone,
// which reads the weight and not the input, so autodiff keeps nothing for them (PyTorch saves a
// matmul's input only when its other operand needs a gradient; Transformer Engine's Linear keeps
// it only for the weight gradient).
SavedTensors ComputeSavedTensors(const Graph& g, const std::vector<OpCost>& costs,
                                 const GraphFacts& facts, const Calibration& cal,
                                 const TargetSpec& target, int eb, int weight_input_bytes,
                                 const FusionPlan* fusion, const std::vector<bool>& written,
                                 const std::vector<bool>& frozen);

}  // namespace tpudoctor

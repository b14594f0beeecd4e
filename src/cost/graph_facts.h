// Structural facts of a graph that the time and memory models need beyond per-op costs: the
// attention cores (softmax(QK^T)V), activations a framework runs as one kernel but an export wrote
// as several ops (GELU, SiLU), depthwise convolutions, convolutions whose BatchNorm an inference
// export folded, and the layer each node belongs to. Private to src/cost.
#pragma once

#include <string>
#include <vector>

#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/ir/graph.h"

namespace tpudoctor {

// Structural facts the time and memory models need beyond per-op costs.
struct GraphFacts {
  std::vector<bool> attention;          // inside a softmax(QK^T)V core, between the two matmuls
  std::vector<bool> implied_batchnorm;  // a conv whose BatchNorm the inference export folded
  std::vector<bool> depthwise;          // depthwise convolution
  // An activation the framework runs as one kernel but the export wrote as several ops: every op
  // of it but the last is `inside_activation`; the last, which writes the result, is its root.
  std::vector<bool> inside_activation;
  std::vector<bool> activation_root;
  std::vector<std::string> layer;  // LayerKey of the node's scope, "" outside layers
  // A weight matmul that computes an attention core's Q, K or V, or projects its output (O): what
  // MaxText's offloading remat policies send to host memory instead of recomputing.
  std::vector<bool> attention_projection;
  // MoE experts (ModelFacts::experts): the batched matmuls [experts, slots, in] x [experts, in,
  // out], their weights' elements, and per forward pass the elements of the tokens sent to them
  // (their inputs that no other expert matmul computed) and taken back from them (their outputs
  // that no other expert matmul reads): what expert parallelism shards and exchanges.
  std::vector<bool> expert_matmul;
  double expert_params = 0;
  double expert_exchange_elements = 0;
  // Capacity dispatch: the one-hot matmuls that move the tokens to the experts and back (their
  // output reaches an expert matmul, or their input comes from one, through layout ops), and the
  // share of the experts' padded slots that routed tokens fill.
  std::vector<bool> moe_dispatch;
  double expert_fill = 1;
  // Dropless routing: expert matmuls and no dispatch matmul — the experts run as grouped
  // matmuls over the tokens routed to each (Calibration::grouped_tile_rows).
  bool grouped_experts = false;
  // Of a matrix op's FLOPs, the model's own work (what MFU counts, as MaxText's TFLOP/s does):
  // none of a dispatch matmul's, the filled share of an expert's, all of any other's.
  double UsefulShare(std::size_t node) const {
    return moe_dispatch[node] ? 0 : expert_matmul[node] ? expert_fill : 1;
  }
  // Elements of the keys and values the Attention ops read (their inputs 1 and 2): all of them,
  // and the largest one op's — what context parallelism gathers.
  double attention_kv_elements = 0;
  double largest_attention_kv_elements = 0;
  // Of the attention projections, those whose output reaches the core (Q, K, V; not O).
  std::vector<bool> attention_input_projection;
  // Matmuls with a weight (an initializer operand): what LoRA freezes (EstimateOptions::
  // lora_rank). Of them, the dense ones inside the layers (a 2-D weight) are what LoRA may adapt:
  // `lora_width` is the sum of such a weight's two dims (one rank of its adapter, A in x r and
  // B r x out, has that many elements), 0 for every other node.
  std::vector<bool> weight_matmul;
  std::vector<double> lora_width;
  // A layer's MLP: its down-projections are the weight matmuls (not attention projections) whose
  // input another weight matmul of the same layer computes through pointwise ops alone (the
  // activation, a gate's product); those are its up-projections. A router reads the layer's
  // normalized input, not a matmul's product, and is neither (Remat::kDotsExceptMlpUp).
  std::vector<bool> mlp_down;
  std::vector<bool> mlp_up;
  // Elements of the Attention ops' outputs, all of them: what keeping them for the backward pass
  // holds (EstimateOptions::keep_attention_output).
  double attention_output_elements = 0;
  bool any_attention = false;
  bool any_attention_projection = false;
  bool any_implied_batchnorm = false;
  bool any_activation = false;  // any activation_root
  bool any_depthwise = false;
  ChannelsMinorValues channels_minor;  // conv activations laid out channels-minor
};

GraphFacts AnalyzeGraph(const Graph& g);

// Ops the matrix units run: matmuls, convolutions, recurrent cells.
inline bool IsMatrixKind(OpKind kind) {
  return kind == OpKind::kMatMul || kind == OpKind::kConv || kind == OpKind::kConvTranspose ||
         kind == OpKind::kRecurrent;
}

}  // namespace tpudoctor

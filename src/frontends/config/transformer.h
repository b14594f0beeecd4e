// TransformerSpec: the handful of numbers that decide a transformer's parameters, FLOPs and
// activations, read from a Hugging Face config or a MaxText YAML (model_config.cc), and the graph
// they make (transformer_graph.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpudoctor/ir/graph.h"
#include "tpudoctor/support/result.h"

namespace tpudoctor::config {

enum class Norm : std::uint8_t { kRms, kLayer };
enum class Head : std::uint8_t { kCausalLm, kMaskedLm, kClassifier };

struct TransformerSpec {
  std::string family;               // "llama", "gpt2", "bert", "t5", ... (the config's model_type)
  std::int64_t layers = 0;          // decoder layers (encoder layers for encoders and T5)
  std::int64_t decoder_layers = 0;  // T5: decoder layers beside `layers` encoder layers
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t ffn = 0;  // MLP width (per expert for MoE)
  std::int64_t vocab = 0;
  std::int64_t max_positions = 0;      // 0: unknown
  std::int64_t learned_positions = 0;  // rows of a learned position table (GPT-2, BERT)
  std::int64_t token_types = 0;        // BERT's segment embeddings
  std::int64_t experts = 0;            // MoE: routed experts per layer
  std::int64_t experts_per_token = 0;
  std::int64_t shared_expert_ffn = 0;  // always-on experts' width (Qwen-MoE, DeepSeek, Llama 4)
  // MoE dispatch: 0 for dropless (each routed token computed once); F > 0 for capacity dispatch:
  // each expert takes at most max(ceil(seq x experts_per_token / experts) x F, F) tokens of a
  // sequence (MaxText's formula), gathered and scattered by one-hot matmuls.
  double capacity_factor = 0;
  // MoE models whose layers are not all MoE (Llama 4's interleave step, DeepSeek's first dense
  // layers, Qwen-MoE's mlp_only_layers): per layer, a dense MLP of `dense_ffn` (0: `ffn`) instead
  // of the experts. Empty: every layer routes.
  std::vector<bool> dense_layers;
  std::int64_t dense_ffn = 0;
  // Local attention (Mistral's, Gemma 2/3's, GPT-OSS's sliding window): per layer, whether it
  // attends only to the `sliding_window` tokens before each query. Empty: every layer is global.
  std::vector<bool> windowed;
  std::int64_t sliding_window = 0;
  // Llama 4's chunked attention: per layer, whether a query attends only to the keys of its own
  // `attention_chunk`-token chunk (chunks aligned at multiples of it). Empty: none.
  std::vector<bool> chunked;
  std::int64_t attention_chunk = 0;
  // Gemma 4's global layers (the ones `windowed` leaves out): their own head width and key/value
  // heads (0: the local layers'), and one projection for both keys and values.
  std::int64_t global_head_dim = 0;
  std::int64_t global_kv_heads = 0;
  bool global_shared_kv = false;
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi K2; the DeepSeek-V2 paper, section 2.1):
  // queries through a rank-`q_lora_rank` bottleneck (0: one projection); keys and values
  // expanded per head from one latent of `kv_lora_rank` a token, beside one rotary key of
  // `rope_head_dim` all heads share. A head's queries and keys have `nope_head_dim` +
  // `rope_head_dim` elements, its values `v_head_dim`. Inference caches only the latent and the
  // rotary key. `kv_lora_rank` 0: ordinary multi-head attention.
  struct LatentAttention {
    std::int64_t q_lora_rank = 0;
    std::int64_t kv_lora_rank = 0;
    std::int64_t nope_head_dim = 0;
    std::int64_t rope_head_dim = 0;
    std::int64_t v_head_dim = 0;
  } mla;
  bool gated_mlp = true;            // SwiGLU/GeGLU: gate and up projections
  std::string activation = "silu";  // silu, gelu, relu
  Norm norm = Norm::kRms;
  bool post_norm = false;  // BERT: norm after the residual add
  bool causal = true;
  bool bias = false;      // biases on the projections (GPT-2, BERT, GPT-NeoX)
  bool qkv_bias = false;  // biases on Q/K/V only (Qwen2)
  bool norm_bias = true;  // LayerNorm's shift (none in DBRX, nor in MPT with `no_bias`)
  bool tied_embeddings = false;
  Head head = Head::kCausalLm;
  std::int64_t num_labels = 2;
  std::vector<std::string> notes;  // what was assumed while reading the config
};

// The graph of one training/inference step on `batch` sequences of `seq` tokens. Errors: sizes
// that overflow or that do not describe a transformer (zero heads, hidden not divisible, ...).
Result<Graph> BuildTransformerGraph(const TransformerSpec& spec, std::int64_t batch,
                                    std::int64_t seq);

// Checks the numbers before building: every size positive and below sane bounds.
Result<Ok> ValidateSpec(const TransformerSpec& spec, const std::string& what);

}  // namespace tpudoctor::config

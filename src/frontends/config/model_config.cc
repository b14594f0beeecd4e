// Hugging Face config.json and MaxText model YAML → TransformerSpec → Graph. Each family's keys are
// read as its modeling code in transformers (or MaxText's configs/models/*.yml) defines them.
#include "tpudoctor/frontend/model_config.h"

#include <algorithm>
#include <set>

#include "src/frontends/config/transformer.h"
#include "src/frontends/with_op_support.h"
#include "src/support/json_input.h"
#include "src/support/yaml_input.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

using config::Head;
using config::Norm;
using config::TransformerSpec;
using nlohmann::json;

constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{4} << 20;

std::int64_t Int(const json& j, std::initializer_list<std::string_view> keys,
                 std::int64_t fallback = 0) {
  for (std::string_view k : keys) {
    const json* m = Member(j, k);
    if (m == nullptr || m->is_null()) continue;
    if (m->is_number_integer()) return m->get<std::int64_t>();
    if (m->is_number_float()) {
      const double d = m->get<double>();
      if (d >= 0 && d < 1e12 && d == static_cast<double>(static_cast<std::int64_t>(d)))
        return static_cast<std::int64_t>(d);
      return -1;  // not an integer: ValidateSpec rejects it
    }
    return -1;
  }
  return fallback;
}

bool Bool(const json& j, std::string_view key, bool fallback) {
  const json* m = Member(j, key);
  return m != nullptr && m->is_boolean() ? m->get<bool>() : fallback;
}

double Number(const json& j, std::string_view key, double fallback) {
  const json* m = Member(j, key);
  return m != nullptr && m->is_number() ? m->get<double>() : fallback;
}

// silu/swish, gelu (all approximations), relu; `gated-gelu` style names set the gate.
std::string ActivationName(std::string act, bool& gated) {
  act = AsciiLower(act);
  if (act.starts_with("gated-")) {
    gated = true;
    act = act.substr(6);
  }
  if (act.find("gelu") != std::string::npos) return "gelu";
  if (act == "relu") return "relu";
  return "silu";
}

// The head the architecture name asks for.
Head HeadOf(const json& cfg, Head fallback) {
  const json* arch = Member(cfg, "architectures");
  if (arch == nullptr || !arch->is_array() || arch->empty() || !(*arch)[0].is_string())
    return fallback;
  const std::string a = (*arch)[0].get<std::string>();
  if (a.ends_with("ForCausalLM") || a.ends_with("LMHeadModel") ||
      a.ends_with("ForConditionalGeneration"))
    return Head::kCausalLm;
  if (a.ends_with("ForMaskedLM") || a.ends_with("ForPreTraining")) return Head::kMaskedLm;
  if (a.ends_with("Classification") || a.ends_with("QuestionAnswering") || a.ends_with("Model"))
    return Head::kClassifier;
  return fallback;
}

// Which layers of an MoE model run a dense MLP instead of the experts, as the configs say it:
// DeepSeek's `first_k_dense_replace` (the first k) and `moe_layer_freq`, Llama 4's
// `interleave_moe_layer_step` (every step-th layer routes), Qwen-MoE's `decoder_sparse_step` and
// `mlp_only_layers`. Empty: all route.
// Per layer, whether it is dense: one of the first `first_dense`, all but every `step`-th (the
// step-th routes), or one whose index `freq` does not divide (index 0 routes). Empty: all route.
std::vector<bool> DenseLayerPattern(std::int64_t layers, std::int64_t first_dense,
                                    std::int64_t step, std::int64_t freq = 1) {
  if (layers <= 0 || layers > 100000) return {};
  std::vector<bool> dense(static_cast<std::size_t>(layers), false);
  for (std::int64_t i = 0; i < layers; ++i) {
    dense[static_cast<std::size_t>(i)] =
        i < first_dense || (step > 1 && (i + 1) % step != 0) || (freq > 1 && i % freq != 0);
  }
  if (std::ranges::none_of(dense, [](bool d) { return d; })) return {};
  return dense;
}

std::vector<bool> DenseLayers(const json& cfg, std::int64_t layers) {
  if (layers <= 0 || layers > 100000) return {};
  std::vector<bool> dense =
      DenseLayerPattern(layers, Int(cfg, {"first_k_dense_replace"}),
                        Int(cfg, {"interleave_moe_layer_step", "decoder_sparse_step"}, 1),
                        Int(cfg, {"moe_layer_freq"}, 1));
  if (const json* only = Member(cfg, "mlp_only_layers"); only != nullptr && only->is_array()) {
    for (const json& i : *only) {
      if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::int64_t>() >= layers)
        continue;
      dense.resize(static_cast<std::size_t>(layers), false);
      dense[static_cast<std::size_t>(i.get<std::int64_t>())] = true;
    }
  }
  return dense;
}

// Per layer of `layers`: true but on every `interval`-th layer (all true for an interval <= 0).
std::vector<bool> AllButEvery(std::int64_t layers, std::int64_t interval) {
  std::vector<bool> out(static_cast<std::size_t>(layers), true);
  for (std::int64_t i = 0; interval > 0 && i < layers; ++i)
    out[static_cast<std::size_t>(i)] = (i + 1) % interval != 0;
  return out;
}

// Sliding-window attention, as the configs say which layers use it: `layer_types` per layer
// ("sliding_attention" / "full_attention": Gemma 3, GPT-OSS, recent transformers), else Gemma 2's
// alternation (even layers local), Gemma 3's `sliding_window_pattern` (every N-th layer global),
// Qwen's `use_sliding_window`, or a `sliding_window` alone on every layer (Mistral, Mixtral).
void SlidingWindows(const json& cfg, const std::string& type, TransformerSpec& s) {
  s.sliding_window = Int(cfg, {"sliding_window"});
  if (s.sliding_window <= 0 || s.layers <= 0 || s.layers > 100000) {
    s.sliding_window = std::max<std::int64_t>(0, s.sliding_window);
    return;
  }
  if (type.starts_with("qwen") && !Bool(cfg, "use_sliding_window", false)) {
    s.sliding_window = 0;
    return;
  }
  const auto n = static_cast<std::size_t>(s.layers);
  s.windowed.assign(n, true);
  if (const json* types = Member(cfg, "layer_types");
      types != nullptr && types->is_array() && types->size() == n) {
    for (std::size_t i = 0; i < n; ++i)
      s.windowed[i] =
          (*types)[i].is_string() && (*types)[i].get<std::string>() == "sliding_attention";
  } else if (type == "gemma2") {
    for (std::size_t i = 0; i < n; ++i) s.windowed[i] = i % 2 == 0;
  } else if (type.starts_with("gemma3")) {
    s.windowed = AllButEvery(s.layers, Int(cfg, {"sliding_window_pattern"}, 6));
  }
  if (std::ranges::none_of(s.windowed, [](bool w) { return w; })) {
    s.windowed.clear();
    s.sliding_window = 0;
  }
}

// Llama 4's chunked attention (transformers' Llama4TextAttention): the layers that use rotary
// positions — `no_rope_layers[i]` 1, by default all but every `no_rope_layer_interval`-th (4) —
// attend within chunks of `attention_chunk_size`; the others globally.
void Llama4Chunks(const json& cfg, TransformerSpec& s) {
  s.attention_chunk = Int(cfg, {"attention_chunk_size"});
  if (s.attention_chunk <= 0 || s.layers <= 0 || s.layers > 100000) {
    s.attention_chunk = std::max<std::int64_t>(0, s.attention_chunk);
    return;
  }
  s.chunked = AllButEvery(s.layers, Int(cfg, {"no_rope_layer_interval"}, 4));
  const json* rope = Member(cfg, "no_rope_layers");
  if (rope == nullptr || !rope->is_array() || rope->size() != s.chunked.size()) return;
  for (std::size_t i = 0; i < s.chunked.size(); ++i)
    s.chunked[i] = (*rope)[i].is_number_integer() && (*rope)[i].get<std::int64_t>() != 0;
}

// Multi-head latent attention's sizes, under the names DeepSeek's HF configs and MaxText's YAML
// share (`fallback`: what a missing one is, MaxText's base.yml values or none).
TransformerSpec::LatentAttention LatentAttentionOf(const json& cfg, bool maxtext_defaults) {
  const auto fallback = [&](std::int64_t v) { return maxtext_defaults ? v : 0; };
  return {.q_lora_rank = Int(cfg, {"q_lora_rank"}),
          .kv_lora_rank = Int(cfg, {"kv_lora_rank"}, fallback(512)),
          .nope_head_dim = Int(cfg, {"qk_nope_head_dim"}, fallback(128)),
          .rope_head_dim = Int(cfg, {"qk_rope_head_dim"}, fallback(64)),
          .v_head_dim = Int(cfg, {"v_head_dim"}, fallback(128))};
}

// Llama-style decoders: Llama, Mistral, Mixtral, Qwen2/3 (+MoE), Gemma, Phi-3, OLMo, ... and any
// config with the same keys.
TransformerSpec Decoder(const json& cfg, const std::string& type) {
  TransformerSpec s;
  s.family = type;
  s.layers = Int(cfg, {"num_hidden_layers"});
  s.hidden = Int(cfg, {"hidden_size"});
  s.heads = Int(cfg, {"num_attention_heads"});
  s.kv_heads = Int(cfg, {"num_key_value_heads"}, s.heads);
  s.head_dim = Int(cfg, {"head_dim"}, s.heads > 0 ? s.hidden / s.heads : 0);
  s.ffn = Int(cfg, {"intermediate_size"});
  s.vocab = Int(cfg, {"vocab_size"});
  s.max_positions = Int(cfg, {"max_position_embeddings"});
  const bool gemma = type.starts_with("gemma");
  s.tied_embeddings = Bool(cfg, "tie_word_embeddings", gemma);
  s.qkv_bias = type.starts_with("qwen2") || Bool(cfg, "attention_bias", false);
  bool gated = true;
  s.activation = ActivationName(StringMember(cfg, "hidden_act").empty()
                                    ? StringMember(cfg, "hidden_activation")
                                    : StringMember(cfg, "hidden_act"),
                                gated);
  s.experts = Int(cfg, {"num_local_experts", "num_experts", "n_routed_experts"});
  if (s.experts > 0) {
    s.experts_per_token = Int(cfg, {"num_experts_per_tok"}, 2);
    s.dense_ffn = Int(cfg, {"intermediate_size_mlp"}, s.ffn);
    s.ffn = Int(cfg, {"moe_intermediate_size"}, s.ffn);
    s.shared_expert_ffn = Int(cfg, {"shared_expert_intermediate_size"});
    // DeepSeek: `n_shared_experts` experts of the routed width; Llama 4: one MLP of
    // `intermediate_size` beside the routed experts in every MoE layer.
    if (const std::int64_t n = Int(cfg, {"n_shared_experts"}); n > 0)
      s.shared_expert_ffn = n * s.ffn;
    if (type.starts_with("llama4")) s.shared_expert_ffn = Int(cfg, {"intermediate_size"});
    s.dense_layers = DenseLayers(cfg, s.layers);
  }
  if (Int(cfg, {"kv_lora_rank"}) != 0) {
    s.mla = LatentAttentionOf(cfg, false);
    s.head_dim = s.mla.nope_head_dim + s.mla.rope_head_dim;
  }
  SlidingWindows(cfg, type, s);
  if (type.starts_with("llama4")) Llama4Chunks(cfg, s);
  return s;
}

TransformerSpec Gpt2(const json& cfg) {
  TransformerSpec s;
  s.family = "gpt2";
  s.layers = Int(cfg, {"n_layer"});
  s.hidden = Int(cfg, {"n_embd"});
  s.heads = s.kv_heads = Int(cfg, {"n_head"});
  s.head_dim = s.heads > 0 ? s.hidden / s.heads : 0;
  s.ffn = Int(cfg, {"n_inner"}, 4 * s.hidden);
  s.vocab = Int(cfg, {"vocab_size"});
  s.max_positions = s.learned_positions = Int(cfg, {"n_positions", "n_ctx"});
  s.gated_mlp = false;
  s.activation = "gelu";
  s.norm = Norm::kLayer;
  s.bias = true;
  s.tied_embeddings = Bool(cfg, "tie_word_embeddings", true);
  return s;
}

TransformerSpec GptNeoX(const json& cfg) {
  TransformerSpec s = Decoder(cfg, "gpt_neox");
  s.gated_mlp = false;
  s.activation = "gelu";
  s.norm = Norm::kLayer;
  s.bias = true;
  s.qkv_bias = false;
  s.tied_embeddings = Bool(cfg, "tie_word_embeddings", false);
  return s;
}

// GPT-J (GPTJConfig): GPT-2's names (`n_embd`, `n_layer`, `n_head`, `n_inner`) with rotary
// positions (`rotary_dim` of each head) instead of a learned table, no biases on the attention's
// projections, and an untied output layer. Its parallel attention and MLP do the work and hold
// the weights a sequential block does.
TransformerSpec GptJ(const json& cfg) {
  TransformerSpec s = Gpt2(cfg);
  s.family = "gptj";
  s.learned_positions = 0;
  s.tied_embeddings = Bool(cfg, "tie_word_embeddings", false);
  return s;
}

// Decoders whose MLP is one up projection and its activation, not a gate (Phi-1/2, StarCoder 2):
// LayerNorm and biases, otherwise read as Decoder reads a Llama.
TransformerSpec PlainMlpDecoder(const json& cfg, const std::string& type) {
  TransformerSpec s = Decoder(cfg, type);
  s.gated_mlp = false;
  s.activation = "gelu";
  s.norm = Norm::kLayer;
  s.bias = Bool(cfg, "use_bias", true);
  s.qkv_bias = false;
  s.tied_embeddings = Bool(cfg, "tie_word_embeddings", type == "starcoder2");
  return s;
}

// Falcon (FalconConfig; `RefinedWeb*` for the first checkpoints): one key/value head
// (`multi_query`) or, in the new decoder architecture (40B, 180B), `num_kv_heads` groups; a GELU
// MLP four times as wide unless `ffn_hidden_size` says; LayerNorm, tied embeddings. Its parallel
// attention and MLP (`parallel_attn`) do the work and hold the weights a sequential block does.
TransformerSpec Falcon(const json& cfg) {
  TransformerSpec s;
  s.family = "falcon";
  s.layers = Int(cfg, {"num_hidden_layers", "n_layer"});
  s.hidden = Int(cfg, {"hidden_size"});
  s.heads = Int(cfg, {"num_attention_heads", "n_head"});
  const bool grouped = Bool(cfg, "new_decoder_architecture", false);
  s.kv_heads = grouped                          ? Int(cfg, {"num_kv_heads", "n_head_kv"}, s.heads)
               : Bool(cfg, "multi_query", true) ? 1
                                                : s.heads;
  s.head_dim = s.heads > 0 ? s.hidden / s.heads : 0;
  s.ffn = Int(cfg, {"ffn_hidden_size"}, 4 * s.hidden);
  s.vocab = Int(cfg, {"vocab_size"});
  s.max_positions = Int(cfg, {"max_position_embeddings"}, 2048);
  s.gated_mlp = false;
  s.activation = "gelu";
  s.norm = Norm::kLayer;
  s.bias = Bool(cfg, "bias", false);
  s.tied_embeddings = Bool(cfg, "tie_word_embeddings", true);
  return s;
}

// GPT-BigCode (StarCoder, SantaCoder): GPT-2's names and block with one key/value head
// (`multi_query`).
TransformerSpec GptBigCode(const json& cfg) {
  TransformerSpec s = Gpt2(cfg);
  s.family = "gpt_bigcode";
  if (Bool(cfg, "multi_query", true)) s.kv_heads = 1;
  return s;
}

// `key`'s object in `j` (DBRX's and MPT's `attn_config`, `ffn_config`), else an empty one.
const json& ObjectMember(const json& j, std::string_view key) {
  static const json kEmpty = json::object();
  const json* m = Member(j, key);
  return m != nullptr && m->is_object() ? *m : kEmpty;
}

// DBRX (DbrxConfig): `d_model`, `n_heads`, `n_layers`, the key/value heads in `attn_config`, the
// experts in `ffn_config` (GLU experts of `ffn_hidden_size`, `moe_top_k` of `moe_num_experts` a
// token); LayerNorm without biases, untied embeddings.
TransformerSpec Dbrx(const json& cfg) {
  TransformerSpec s;
  s.family = "dbrx";
  s.layers = Int(cfg, {"n_layers"});
  s.hidden = Int(cfg, {"d_model"});
  s.heads = Int(cfg, {"n_heads"});
  const json& a = ObjectMember(cfg, "attn_config");
  const json& f = ObjectMember(cfg, "ffn_config");
  s.kv_heads = Int(a, {"kv_n_heads"}, s.heads);
  s.head_dim = s.heads > 0 ? s.hidden / s.heads : 0;
  s.ffn = Int(f, {"ffn_hidden_size"}, 4 * s.hidden);
  s.experts = Int(f, {"moe_num_experts"});
  if (s.experts > 0) {
    s.experts_per_token = Int(f, {"moe_top_k"}, 1);
    s.dense_ffn = s.ffn;
  }
  s.vocab = Int(cfg, {"vocab_size"});
  s.max_positions = Int(cfg, {"max_seq_len"}, 2048);
  s.norm = Norm::kLayer;
  s.norm_bias = false;
  s.tied_embeddings = Bool(cfg, "tie_word_embeddings", false);
  return s;
}

// MPT (MosaicML's MPTConfig in llm-foundry, `model_type: mpt`): `d_model`, `n_heads`,
// `n_layers`, an MLP `expansion_ratio` times as wide (`ffn_config.ffn_hidden_size` where given;
// `ffn_type: mptglu` is gated), multi-head attention unless `attn_config.attn_type` says
// multi-query or grouped (`kv_n_heads`), a learned position table of `max_seq_len` rows unless
// `learned_pos_emb` is false (ALiBi adds its bias to the scores and holds no weights), LayerNorm,
// biases everywhere unless `no_bias` (MPTModel drops every bias then, the norms' included), and
// an output layer tied to the token embedding unless `tie_word_embeddings` is false.
TransformerSpec Mpt(const json& cfg) {
  TransformerSpec s;
  s.family = "mpt";
  s.layers = Int(cfg, {"n_layers"});
  s.hidden = Int(cfg, {"d_model"});
  s.heads = Int(cfg, {"n_heads"});
  const json& a = ObjectMember(cfg, "attn_config");
  const json& f = ObjectMember(cfg, "ffn_config");
  const std::string attn_type = StringMember(a, "attn_type");
  s.kv_heads = attn_type == "multiquery_attention"      ? 1
               : attn_type == "grouped_query_attention" ? Int(a, {"kv_n_heads"}, s.heads)
                                                        : s.heads;
  s.head_dim = s.heads > 0 ? s.hidden / s.heads : 0;
  // A ratio outside (0, 1024] leaves the width 0, which the graph's checks refuse.
  const double ratio = Number(cfg, "expansion_ratio", 4);
  const bool sane = ratio > 0 && ratio <= 1024 && s.hidden > 0 && s.hidden <= (1LL << 40);
  s.ffn = Int(f, {"ffn_hidden_size"},
              sane ? static_cast<std::int64_t>(ratio * static_cast<double>(s.hidden)) : 0);
  s.gated_mlp = StringMember(f, "ffn_type") == "mptglu";
  s.activation = "gelu";
  s.vocab = Int(cfg, {"vocab_size"});
  s.max_positions = Int(cfg, {"max_seq_len"}, 2048);
  if (Bool(cfg, "learned_pos_emb", true) && !Bool(a, "alibi", false))
    s.learned_positions = s.max_positions;
  s.norm = Norm::kLayer;
  s.bias = s.norm_bias = !Bool(cfg, "no_bias", false);
  s.tied_embeddings = Bool(cfg, "tie_word_embeddings", true);
  return s;
}

TransformerSpec Bert(const json& cfg, const std::string& type) {
  TransformerSpec s;
  s.family = type;
  const bool distil = type == "distilbert";
  s.layers = Int(cfg, {distil ? "n_layers" : "num_hidden_layers"});
  s.hidden = Int(cfg, {distil ? "dim" : "hidden_size"});
  s.heads = s.kv_heads = Int(cfg, {distil ? "n_heads" : "num_attention_heads"});
  s.head_dim = s.heads > 0 ? s.hidden / s.heads : 0;
  s.ffn = Int(cfg, {distil ? "hidden_dim" : "intermediate_size"});
  s.vocab = Int(cfg, {"vocab_size"});
  s.max_positions = s.learned_positions = Int(cfg, {"max_position_embeddings"}, 512);
  s.token_types = distil ? 0 : Int(cfg, {"type_vocab_size"}, 2);
  s.gated_mlp = false;
  s.activation = "gelu";
  s.norm = Norm::kLayer;
  s.post_norm = true;
  s.causal = false;
  s.bias = true;
  s.tied_embeddings = true;
  s.head = HeadOf(cfg, Head::kMaskedLm);
  s.num_labels = std::max<std::int64_t>(2, Int(cfg, {"num_labels"}, 2));
  return s;
}

TransformerSpec T5(const json& cfg) {
  TransformerSpec s;
  s.family = "t5";
  s.layers = Int(cfg, {"num_layers"});
  s.decoder_layers = Int(cfg, {"num_decoder_layers"}, s.layers);
  s.hidden = Int(cfg, {"d_model"});
  s.heads = s.kv_heads = Int(cfg, {"num_heads"});
  s.head_dim = Int(cfg, {"d_kv"}, s.heads > 0 ? s.hidden / s.heads : 0);
  s.ffn = Int(cfg, {"d_ff"});
  s.vocab = Int(cfg, {"vocab_size"});
  bool gated = false;
  s.activation = ActivationName(StringMember(cfg, "feed_forward_proj").empty()
                                    ? "relu"
                                    : StringMember(cfg, "feed_forward_proj"),
                                gated);
  s.gated_mlp = gated;
  s.norm = Norm::kRms;  // T5's LayerNorm has no mean and no bias
  s.tied_embeddings = Bool(cfg, "tie_word_embeddings", true);
  return s;
}

Result<TransformerSpec> FromHuggingFace(const json& root, const std::string& what) {
  // Multimodal wrappers (Gemma 3, Llava) keep the language model in `text_config`.
  const json* text = Member(root, "text_config");
  const json& cfg = text != nullptr && text->is_object() ? *text : root;
  std::string type = AsciiLower(StringMember(cfg, "model_type"));
  if (type.empty()) type = AsciiLower(StringMember(root, "model_type"));
  TransformerSpec s;
  if (type == "gpt2") {
    s = Gpt2(cfg);
  } else if (type == "gptj") {
    s = GptJ(cfg);
  } else if (type == "gpt_neox") {
    s = GptNeoX(cfg);
  } else if (type == "gpt_bigcode") {
    s = GptBigCode(cfg);
  } else if (type == "falcon" || type.starts_with("refinedweb")) {
    s = Falcon(cfg);
  } else if (type == "dbrx") {
    s = Dbrx(cfg);
  } else if (type == "mpt") {
    s = Mpt(cfg);
  } else if ((type == "phi" || type == "starcoder2") && Member(cfg, "hidden_size") != nullptr) {
    s = PlainMlpDecoder(cfg, type);
  } else if (type == "bert" || type == "roberta" || type == "distilbert" || type == "xlm-roberta" ||
             type == "electra") {
    s = Bert(cfg, type);
  } else if (type == "t5" || type == "mt5" || type == "umt5") {
    s = T5(cfg);
  } else if (Member(cfg, "hidden_size") != nullptr && Member(cfg, "num_hidden_layers") != nullptr &&
             Member(cfg, "num_attention_heads") != nullptr) {
    static const std::set<std::string> kKnown = {
        "llama",     "mistral", "mixtral", "qwen2",      "qwen2_moe",   "qwen3",
        "qwen3_moe", "gemma",   "gemma2",  "gemma3",     "gemma3_text", "phi3",
        "olmo",      "olmo2",   "granite", "cohere",     "deepseek_v2", "deepseek_v3",
        "kimi_k2",   "gpt_oss", "llama4",  "llama4_text"};
    s = Decoder(cfg, type.empty() ? "decoder" : type);
    if (!kKnown.count(type)) {
      s.notes.push_back("model_type `" + (type.empty() ? std::string("?") : type) +
                        "` is read as a Llama-style decoder (RMSNorm, gated MLP, rotary "
                        "positions); check the parameter count against the model card");
    }
  } else {
    return MakeError(what + ": a Hugging Face config of model_type `" + type +
                     "`, which tpu-doctor cannot build (it reads Llama/Mistral/Mixtral/Qwen/"
                     "Gemma/Phi-style decoders, GPT-2, GPT-J, GPT-NeoX, GPT-BigCode, Falcon, DBRX, "
                     "MPT, StarCoder 2, BERT/RoBERTa/DistilBERT and T5 configs)");
  }
  if (text != nullptr)
    s.notes.push_back("the language model of a multimodal config; other towers are not counted");
  return s;
}

// An MoE MaxText model's layers (src/maxtext/layers/decoders.py, moe.py): experts of
// `base_moe_mlp_dim` (else `base_mlp_dim`), dense layers of `base_mlp_dim` — the first
// `first_num_dense_layers` (DeepSeek) or all but every `interleave_moe_layer_step`-th (Llama 4) —
// and `shared_experts` always-on experts of the routed width (Gemma 4's of `base_mlp_dim`).
void MaxTextMoeLayers(const json& cfg, const std::string& block, TransformerSpec& s) {
  s.dense_ffn = s.ffn;
  s.ffn = Int(cfg, {"base_moe_mlp_dim"}, s.ffn);
  if (const std::int64_t shared = Int(cfg, {"shared_experts"}); shared > 0)
    s.shared_expert_ffn = shared * (block == "gemma4" ? s.dense_ffn : s.ffn);
  s.dense_layers = DenseLayerPattern(s.layers, Int(cfg, {"first_num_dense_layers"}),
                                     Int(cfg, {"interleave_moe_layer_step"}, 1));
}

// MaxText's local attention, as each decoder block lays it out (src/maxtext/models/*.py):
// `sliding_window_size` on five of every six layers (Gemma 3 and 4: the sixth global), on every
// other layer (GPT-OSS: even layers local; Gemma 2: FromMaxText has unmerged its layers).
void MaxTextWindows(const json& cfg, const std::string& block, TransformerSpec& s) {
  const std::int64_t window = Int(cfg, {"sliding_window_size"});
  if (window <= 0 || s.layers <= 0 || s.layers > 50000) return;
  std::int64_t period = 0;  // the pattern's length; its last layer global
  if (block == "gemma2" || block == "gpt_oss") {
    period = 2;
  } else if (block == "gemma3" || block == "gemma4") {
    period = 6;
  } else {
    return;
  }
  s.sliding_window = window;
  s.windowed = AllButEvery(s.layers, period);
}

// MaxText's model YAML (src/MaxText/configs/models/*.yml): `base_*` sizes, `mlp_activations`
// (["silu","linear"] is SwiGLU), `num_experts`, `logits_via_embedding` (tied output).
Result<TransformerSpec> FromMaxText(const json& cfg, const std::string& what) {
  TransformerSpec s;
  const std::string block = AsciiLower(StringMember(cfg, "decoder_block"));
  s.family = "maxtext-" + (block.empty() ? std::string("decoder") : block);
  s.layers = Int(cfg, {"base_num_decoder_layers"});
  // MaxText's Gemma 2 layer is a local and a global layer in one (gemma2.py): twice the layers.
  if (block == "gemma2" && s.layers > 0 && s.layers <= 50000) s.layers *= 2;
  s.hidden = Int(cfg, {"base_emb_dim"});
  s.heads = Int(cfg, {"base_num_query_heads"});
  s.kv_heads = Int(cfg, {"base_num_kv_heads"}, s.heads);
  s.head_dim = Int(cfg, {"head_dim"}, s.heads > 0 ? s.hidden / s.heads : 0);
  s.ffn = Int(cfg, {"base_mlp_dim"});
  s.vocab = Int(cfg, {"vocab_size"}, 32000);
  s.max_positions = Int(cfg, {"max_target_length"});
  s.tied_embeddings = Bool(cfg, "logits_via_embedding", false);
  s.experts = Int(cfg, {"num_experts"}, 1);
  if (s.experts <= 1) {
    s.experts = 0;
  } else {
    s.experts_per_token = Int(cfg, {"num_experts_per_tok"}, 2);
    MaxTextMoeLayers(cfg, block, s);
    // MaxText drops tokens past `capacity_factor` (base.yml: -1, dropless); only its dense path
    // (`sparse_matmul: False`) dispatches with one-hot matmuls, the sparse one computes the
    // routed tokens with grouped matmuls.
    const double cf = Number(cfg, "capacity_factor", -1);
    if (cf > 0 && !Bool(cfg, "sparse_matmul", true)) s.capacity_factor = cf;
  }
  std::vector<std::string> acts;
  if (const json* a = Member(cfg, "mlp_activations"); a != nullptr && a->is_array()) {
    for (const json& x : *a) {
      if (x.is_string()) acts.push_back(AsciiLower(x.get<std::string>()));
    }
  }
  s.gated_mlp = acts.size() >= 2;
  bool gated = false;
  s.activation = acts.empty() ? "silu" : ActivationName(acts[0], gated);
  if (block == "gpt3") {
    s.norm = Norm::kLayer;
    s.bias = true;
  }
  s.bias = s.bias || Bool(cfg, "mlp_bias", false);
  s.qkv_bias = Bool(cfg, "attention_bias", false);
  if (AsciiLower(StringMember(cfg, "attention_type")) == "mla") {
    s.mla = LatentAttentionOf(cfg, true);
    s.head_dim = s.mla.nope_head_dim + s.mla.rope_head_dim;
  }
  MaxTextWindows(cfg, block, s);
  // Llama 4 (llama4.py): chunked attention on every layer but each `nope_layer_interval`-th.
  s.attention_chunk = block == "llama4" ? Int(cfg, {"chunk_attn_window_size"}) : 0;
  if (s.attention_chunk > 0 && s.layers > 0 && s.layers <= 100000)
    s.chunked = AllButEvery(s.layers, Int(cfg, {"nope_layer_interval"}));
  if (!s.windowed.empty()) {  // Gemma 4 (gemma4.py): global layers of their own geometry
    s.global_head_dim = Int(cfg, {"global_head_dim"});
    s.global_kv_heads = Int(cfg, {"global_num_kv_heads"});
    s.global_shared_kv = Bool(cfg, "share_kv_projections", false);
  }
  if (s.layers == 0 && s.hidden == 0)
    return MakeError(what + ": YAML without MaxText's `base_emb_dim`/`base_num_decoder_layers`");
  return s;
}

// --moe-capacity-factor over what the config says; the choice is stated with the shape notes.
void ApplyMoeDispatch(const ShapeOptions& options, TransformerSpec& spec) {
  if (options.moe_capacity_factor) {
    if (spec.experts > 0) {
      spec.capacity_factor = *options.moe_capacity_factor;
    } else {
      spec.notes.push_back("--moe-capacity-factor ignored: the model has no experts");
    }
  }
  if (spec.capacity_factor > 0) {
    spec.notes.push_back("MoE capacity factor " + FormatFixed(spec.capacity_factor, 2) +
                         ": experts padded to capacity, tokens dispatched and combined by "
                         "one-hot matmuls (GShard; MaxText sparse_matmul=False)");
  }
}

bool LooksLikeYaml(const Source& source) {
  const std::string& n = source.display_name;
  return n.ends_with(".yml") || n.ends_with(".yaml");
}

}  // namespace

int SniffModelConfig(const Source& source) {
  const std::string_view head = std::string_view(source.bytes).substr(0, 64 << 10);
  if (head.find("base_emb_dim") != std::string_view::npos &&
      head.find("base_num_decoder_layers") != std::string_view::npos)
    return 100;
  const std::size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] != '{') return 0;
  if (head.find("\"class_name\"") != std::string_view::npos) return 0;  // a Keras config
  const bool hf = head.find("\"model_type\"") != std::string_view::npos ||
                  head.find("\"architectures\"") != std::string_view::npos;
  return hf ? 100 : 0;
}

Result<LoadedModel> LoadModelConfig(const Source& source, const ShapeOptions& options) {
  const std::string& what = source.display_name;
  if (source.bytes.size() > kMaxConfigBytes)
    return MakeError(what + ": larger than a model config can be (4 MiB)");
  const std::size_t first = source.bytes.find_first_not_of(" \t\r\n");
  const bool yaml =
      LooksLikeYaml(source) || (first != std::string::npos && source.bytes[first] != '{');
  auto doc = yaml ? ParseYamlInput(source.bytes, what) : ParseJsonInput(source.bytes, what);
  if (!doc) return doc.error();
  if (!doc->is_object())
    return MakeError(what + ": expected a model config (a mapping of keys), found another value");
  const bool maxtext = Member(*doc, "base_emb_dim") != nullptr;
  auto spec = maxtext ? FromMaxText(*doc, what) : FromHuggingFace(*doc, what);
  if (!spec) return spec.error();
  ApplyMoeDispatch(options, *spec);
  if (auto ok = config::ValidateSpec(*spec, what); !ok) return ok.error();

  LoadedModel out;
  out.format = maxtext ? "maxtext-config" : "hf-config";
  out.producer = maxtext ? "maxtext" : "transformers config";
  const std::int64_t batch = options.batch.value_or(1);
  std::int64_t seq = 0;
  if (auto it = options.dims.find("seq"); it != options.dims.end()) {
    seq = it->second;
  } else if (options.config_seq) {
    seq = *options.config_seq;
  } else {
    seq = spec->max_positions > 0 ? std::min(spec->max_positions, kDefaultConfigSeq)
                                  : kDefaultConfigSeq;
    out.shape_notes.push_back("sequence length " + std::to_string(seq) +
                              " (the default; set it with --seq)");
  }
  if (!options.batch) out.shape_notes.push_back("batch 1 (the default; set it with --batch)");
  for (const std::string& n : spec->notes) out.shape_notes.push_back(n);
  auto graph = config::BuildTransformerGraph(*spec, batch, seq);
  if (!graph) return MakeError(what + ": " + graph.error().message);
  out.graph = std::move(*graph);
  if (maxtext) out.graph.mutable_facts().framework = Framework::kJax;
  out.graph.mutable_facts().experts = spec->experts;
  out.graph.mutable_facts().experts_per_token = spec->experts_per_token;
  return WithOpSupport(std::move(out));
}

}  // namespace tpudoctor

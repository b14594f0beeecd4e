#include "tpudoctor/frontend/model_config.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"
#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/ir/verify.h"

namespace tpudoctor {
namespace {

using testing::ReadFile;
using testing::SourceDir;

Source Example(const std::string& name) {
  return Source{"examples/configs/" + name, ReadFile(SourceDir() / "examples/configs" / name)};
}

double Parameters(const Graph& g) {
  double n = 0;
  for (const Value& v : g.values()) {
    if (v.origin == ValueOrigin::kInitializer && v.type.dtype == DType::kFloat32)
      n += static_cast<double>(*v.type.shape.NumElements());
  }
  return n;
}

LoadedModel LoadOrDie(const Source& s, ShapeOptions o = {}) {
  auto m = LoadModel(s, o);
  EXPECT_TRUE(static_cast<bool>(m)) << (m ? "" : m.error().message);
  if (!m) std::abort();
  EXPECT_TRUE(VerifyGraph(m->graph).empty());
  return std::move(*m);
}

// The parameter counts the model cards publish, within 1%: the graph has the checkpoint's shapes.
TEST(ModelConfigTest, ParameterCountsMatchThePublishedOnes) {
  const std::pair<const char*, double> kModels[] = {{"llama-3.1-8b.json", 8.03e9},
                                                    {"llama-3.1-70b.json", 70.6e9},
                                                    {"mixtral-8x7b.json", 46.7e9},
                                                    {"gemma-2b.json", 2.51e9},
                                                    {"gpt2.json", 124.4e6},
                                                    {"bert-base-uncased.json", 110e6},
                                                    {"t5-small.json", 60.5e6},
                                                    {"maxtext-llama3.1-8b.yml", 8.03e9},
                                                    {"maxtext-llama3.1-70b.yml", 70.6e9},
                                                    // DeepSeek-V3's card: 671B without the
                                                    // multi-token-prediction module.
                                                    {"deepseek-v3.json", 671e9},
                                                    {"maxtext-deepseek3-671b.yml", 671e9},
                                                    {"gpt-oss-120b.json", 116.83e9},
                                                    {"maxtext-gpt-oss-120b.yml", 116.83e9},
                                                    {"maxtext-gemma4-26b.yml", 25.2e9},
                                                    {"maxtext-gemma4-31b.yml", 30.7e9},
                                                    {"maxtext-llama4-maverick-17b-128e.yml", 400e9},
                                                    {"maxtext-mixtral-8x22b.yml", 141e9}};
  for (const auto& [name, published] : kModels) {
    SCOPED_TRACE(name);
    LoadedModel m = LoadOrDie(Example(name));
    EXPECT_NEAR(Parameters(m.graph) / published, 1.0, 0.01);
  }
}

// The families read by their own builders (not as a Llama): their cards' parameter counts within
// 1% (Falcon-7B 6,921,720,704 with one key/value head; Phi-2 2,779,683,840 with plain GELU MLPs
// and biases; StarCoder's GPT-BigCode 15.5B with one key/value head; DBRX 132B, 16 GLU experts;
// GPT-J 6,053,381,344 with rotary positions and an untied output layer).
TEST(ModelConfigTest, FamiliesWithTheirOwnBuildersHaveTheirCardsParameters) {
  const std::pair<const char*, double> kConfigs[] = {
      {R"({"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71,
           "num_hidden_layers": 32, "vocab_size": 65024, "multi_query": true,
           "parallel_attn": true, "bias": false})",
       6.9217e9},
      {R"({"model_type": "phi", "hidden_size": 2560, "intermediate_size": 10240,
           "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 51200,
           "hidden_act": "gelu_new"})",
       2.7797e9},
      {R"({"model_type": "gpt_bigcode", "n_embd": 6144, "n_layer": 40, "n_head": 48,
           "n_inner": 24576, "n_positions": 8192, "vocab_size": 49152, "multi_query": true})",
       15.5e9},
      {R"({"model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40,
           "vocab_size": 100352, "max_seq_len": 32768, "attn_config": {"kv_n_heads": 8},
           "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4}})",
       132e9},
      {R"({"model_type": "gptj", "n_embd": 4096, "n_layer": 28, "n_head": 16, "n_inner": null,
           "rotary_dim": 64, "n_positions": 2048, "vocab_size": 50400,
           "activation_function": "gelu_new", "tie_word_embeddings": false})",
       6.0534e9}};
  for (const auto& [json, published] : kConfigs) {
    SCOPED_TRACE(json);
    ShapeOptions o;
    o.batch = 1;
    LoadedModel m = LoadOrDie(Source{"config.json", json}, o);
    EXPECT_NEAR(Parameters(m.graph) / published, 1.0, 0.01);
    for (const std::string& n : m.shape_notes) EXPECT_EQ(n.find("Llama-style"), std::string::npos);
  }
}

// MPT's parameters, to the unit: llm-foundry's benchmark table lists 125,311,488 for its 125m
// model at 2,048 tokens (biases and a learned position table: 12 layers of 12 x 768^2 weights and
// 6,912 biases, four norm vectors a layer and two at the end, 50,368 x 768 tied token rows and
// 2,048 x 768 position rows). The Hub's MPT-7B drops every bias (`no_bias`) and its ALiBi holds
// no table: 32 x 12 x 4096^2 + 50,432 x 4096 + 65 x 4096 norm weights = 6,649,286,656.
TEST(ModelConfigTest, MptCountsItsBiasesAndPositionTableAsTheConfigSays) {
  const std::pair<const char*, double> kConfigs[] = {
      {R"({"model_type": "mpt", "d_model": 768, "n_heads": 12, "n_layers": 12,
           "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50368,
           "attn_config": {"attn_impl": "flash"}})",
       125311488},
      {R"({"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
           "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432, "no_bias": true,
           "learned_pos_emb": true, "attn_config": {"alibi": true, "attn_type":
           "multihead_attention"}})",
       6649286656}};
  for (const auto& [json, published] : kConfigs) {
    SCOPED_TRACE(json);
    ShapeOptions o;
    o.batch = 1;
    LoadedModel m = LoadOrDie(Source{"config.json", json}, o);
    EXPECT_EQ(Parameters(m.graph), published);
    for (const std::string& n : m.shape_notes) EXPECT_EQ(n.find("Llama-style"), std::string::npos);
  }
}

TEST(ModelConfigTest, MptReadsGroupedAndGatedVariants) {
  ShapeOptions o;
  o.batch = 1;
  // Grouped-query attention of 8 key/value heads and a gated MLP of 11,008.
  LoadedModel m = LoadOrDie(Source{"config.json", R"({"model_type": "mpt", "d_model": 4096,
      "n_heads": 32, "n_layers": 2, "max_seq_len": 4096, "vocab_size": 32000, "no_bias": true,
      "attn_config": {"attn_type": "grouped_query_attention", "kv_n_heads": 8, "alibi": true},
      "ffn_config": {"ffn_type": "mptglu", "ffn_hidden_size": 11008}})"},
                            o);
  const double attention = 4096.0 * 4096 * 2 + 4096.0 * 1024 * 2;
  const double mlp = 3.0 * 4096 * 11008;
  EXPECT_EQ(Parameters(m.graph), 2 * (attention + mlp + 2 * 4096) + 4096 + 32000.0 * 4096);
  // A ratio that is not a width is refused, not multiplied.
  auto bad = LoadModel(Source{"config.json", R"({"model_type": "mpt", "d_model": 64, "n_heads": 2,
      "n_layers": 1, "vocab_size": 10, "expansion_ratio": -3})"},
                       o);
  EXPECT_FALSE(static_cast<bool>(bad));
}

TEST(ModelConfigTest, MaxTextAndHuggingFaceGiveTheSameStep) {
  ShapeOptions o;
  o.dims["seq"] = 8192;
  o.batch = 2;
  LoadedModel hf = LoadOrDie(Example("llama-3.1-8b.json"), o);
  LoadedModel mt = LoadOrDie(Example("maxtext-llama3.1-8b.yml"), o);
  EXPECT_EQ(hf.format, "hf-config");
  EXPECT_EQ(mt.format, "maxtext-config");
  EXPECT_EQ(mt.graph.facts().framework, Framework::kJax);
  EXPECT_EQ(*hf.graph.facts().batch, 2);
  EstimateOptions eo;
  eo.train = true;
  eo.batch = 2;
  const TargetSpec& v6e = **FindTarget("tpu-v6e");
  auto a = EstimateStep(hf.graph, v6e, eo);
  auto b = EstimateStep(mt.graph, v6e, eo);
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(a->model_flops, b->model_flops);
  EXPECT_DOUBLE_EQ(a->memory.total(), b->memory.total());
  // 6 x parameters x tokens (the embedding lookup is no matmul), plus causal attention
  // (12 x layers x seq x hidden per token, halved by the mask): the standard training-FLOPs count.
  const double tokens = 2.0 * 8192;
  const double dense = 6 * (8.03e9 - 128256.0 * 4096) * tokens;
  const double attention = 6.0 * 32 * 8192 * 4096 * tokens;
  EXPECT_NEAR(a->model_flops / (dense + attention), 1.0, 0.01);
  EXPECT_EQ(a->unknown_ops, 0);
}

TEST(ModelConfigTest, SequenceDefaultsAndFlags) {
  LoadedModel bert = LoadOrDie(Example("bert-base-uncased.json"));
  const Shape& ids = bert.graph.value(bert.graph.inputs()[0]).type.shape;
  EXPECT_EQ(ids.dim(1).value(), 512);  // its maximum positions, below the 2048 default
  ASSERT_FALSE(bert.shape_notes.empty());
  EXPECT_NE(bert.shape_notes[0].find("--seq"), std::string::npos);
  ShapeOptions o;
  o.dims["seq"] = 1024;
  auto too_long = LoadModel(Example("bert-base-uncased.json"), o);
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().message.find("512 positions"), std::string::npos);
}

TEST(ModelConfigTest, MoeCostsOnlyTheRoutedExperts) {
  ShapeOptions o;
  o.dims["seq"] = 4096;
  LoadedModel m = LoadOrDie(Example("mixtral-8x7b.json"), o);
  EstimateOptions eo;
  auto e = EstimateStep(m.graph, **FindTarget("tpu-v5p"), eo);
  ASSERT_TRUE(e);
  // Mixtral's 12.9B active parameters (2 of 8 experts), 2 FLOPs each per token, plus attention.
  const double dense = 2 * 12.9e9 * 4096;
  const double attention = 2.0 * 32 * 4096 * 4096 * 4096;  // causal: half of 4 x L x S x h
  EXPECT_NEAR(e->model_flops / (dense + attention), 1.0, 0.05);
}

TEST(ModelConfigTest, BadConfigsAreOneLineErrors) {
  const std::pair<const char*, const char*> kBad[] = {
      {R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2,
           "num_attention_heads": 32, "num_key_value_heads": 5, "intermediate_size": 1,
           "vocab_size": 10})",
       "do not divide"},
      {R"({"model_type": "llama", "hidden_size": -1, "num_hidden_layers": 2,
           "num_attention_heads": 32, "intermediate_size": 1, "vocab_size": 10})",
       "positive"},
      {R"({"model_type": "llama", "hidden_size": 4096.5, "num_hidden_layers": 2,
           "num_attention_heads": 32, "intermediate_size": 1, "vocab_size": 10})",
       "positive"},
      {R"({"model_type": "llama", "hidden_size": 99999999999, "num_hidden_layers": 2,
           "num_attention_heads": 32, "intermediate_size": 1, "vocab_size": 10})",
       "too large"},
      {R"({"model_type": "whisper", "d_model": 384})", "cannot build"},
      {R"({"model_type": "gpt2", "n_embd": 768)", "invalid JSON"},
      {"base_emb_dim: 4096\nbase_num_decoder_layers: [\n", "invalid YAML"},
      {R"({"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 2,
           "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
           "kv_lora_rank": 512})",
       "qk_nope_head_dim must be a positive integer"},
      {"base_emb_dim: 64\nbase_num_decoder_layers: 2\nbase_num_query_heads: 4\n"
       "base_mlp_dim: 128\ndecoder_block: gemma4\nsliding_window_size: 4\n"
       "global_num_kv_heads: 3\n",
       "global layers"},
  };
  for (const auto& [text, expected] : kBad) {
    SCOPED_TRACE(text);
    auto m = LoadModel(Source{"config.json", text}, {});
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().message.find(expected), std::string::npos) << m.error().message;
    EXPECT_EQ(m.error().message.find('\n'), std::string::npos);
  }
}

TEST(ModelConfigTest, UnknownDecoderFamilyIsReadWithANote) {
  auto m = LoadModel(Source{"config.json", R"({"model_type": "newlm", "hidden_size": 256,
      "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 512,
      "vocab_size": 1000})"},
                     {});
  ASSERT_TRUE(m);
  bool noted = false;
  for (const std::string& n : m->shape_notes) noted |= n.find("Llama-style") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(ModelConfigTest, KerasConfigsAreNotTakenForModelConfigs) {
  EXPECT_EQ(SniffModelConfig(Source{"m.json", R"({"class_name": "Sequential", "config": {}})"}), 0);
  EXPECT_GT(SniffModelConfig(Example("gpt2.json")), 0);
}

}  // namespace
}  // namespace tpudoctor

namespace tpudoctor {
namespace {

// Which attention ops are local, and with which window, per the config's own words.
std::vector<std::int64_t> Windows(const std::string& json) {
  ShapeOptions o;
  o.dims["seq"] = 64;
  auto m = LoadModel(Source{"config.json", json}, o);
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  std::vector<std::int64_t> windows;
  if (!m) return windows;
  for (const Node& n : m->graph.nodes()) {
    if (n.op == Op::kAttention) windows.push_back(n.IntAttr("window").value_or(0));
  }
  return windows;
}

constexpr const char* kSmallDecoder =
    R"("hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
       "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100)";

TEST(ModelConfigTest, SlidingWindowLayersAsTheConfigSaysThem) {
  const std::string base = std::string("{\"architectures\": [\"X\"], ") + kSmallDecoder;
  // Mistral: a window on every layer; v0.3's null: none.
  EXPECT_EQ(Windows(base + R"(, "model_type": "mistral", "sliding_window": 16})"),
            (std::vector<std::int64_t>{16, 16, 16, 16}));
  EXPECT_EQ(Windows(base + R"(, "model_type": "mistral", "sliding_window": null})"),
            (std::vector<std::int64_t>{0, 0, 0, 0}));
  // Gemma 2 alternates, local first; Gemma 3 makes every 2nd layer global here.
  EXPECT_EQ(Windows(base + R"(, "model_type": "gemma2", "sliding_window": 16})"),
            (std::vector<std::int64_t>{16, 0, 16, 0}));
  EXPECT_EQ(Windows(base + R"(, "model_type": "gemma3_text", "sliding_window": 16,
                               "sliding_window_pattern": 2})"),
            (std::vector<std::int64_t>{16, 0, 16, 0}));
  // layer_types wins over any pattern (GPT-OSS, recent transformers).
  EXPECT_EQ(Windows(base + R"(, "model_type": "gemma3_text", "sliding_window": 16,
      "layer_types": ["full_attention", "sliding_attention", "sliding_attention",
                      "full_attention"]})"),
            (std::vector<std::int64_t>{0, 16, 16, 0}));
  // Qwen keeps its window off unless use_sliding_window says otherwise.
  EXPECT_EQ(Windows(base + R"(, "model_type": "qwen2", "sliding_window": 16})"),
            (std::vector<std::int64_t>{0, 0, 0, 0}));
}

// MaxText lays local and global layers out in its decoder blocks' code, not in the YAML: GPT-OSS
// alternates (local first), Gemma 3 and 4 make every sixth layer global, Gemma 2's YAML counts a
// local and a global layer as one; other blocks ignore `sliding_window_size`.
TEST(ModelConfigTest, MaxTextLocalAndGlobalLayersAsItsBlocksLayThemOut) {
  const std::string base =
      "base_emb_dim: 64\nbase_num_query_heads: 4\nbase_mlp_dim: 128\n"
      "vocab_size: 100\nsliding_window_size: 16\n";
  auto windows = [&](const std::string& block, int layers) {
    return Windows(base + "decoder_block: \"" + block +
                   "\"\nbase_num_decoder_layers: " + std::to_string(layers) + "\n");
  };
  EXPECT_EQ(windows("gpt_oss", 4), (std::vector<std::int64_t>{16, 0, 16, 0}));
  EXPECT_EQ(windows("gemma3", 7), (std::vector<std::int64_t>{16, 16, 16, 16, 16, 0, 16}));
  EXPECT_EQ(windows("gemma2", 2), (std::vector<std::int64_t>{16, 0, 16, 0}));
  EXPECT_EQ(windows("llama2", 2), (std::vector<std::int64_t>{0, 0}));
}

// Llama 4 attends within chunks on the layers with rotary positions: transformers' no_rope_layers
// (or every fourth layer global by default), MaxText's nope_layer_interval.
TEST(ModelConfigTest, Llama4ChunkedLayers) {
  auto chunks = [](const std::string& text) {
    ShapeOptions o;
    o.dims["seq"] = 64;
    auto m = LoadModel(Source{text.starts_with("{") ? "config.json" : "c.yml", text}, o);
    EXPECT_TRUE(m) << (m ? "" : m.error().message);
    std::vector<std::int64_t> out;
    if (!m) return out;
    for (const Node& n : m->graph.nodes()) {
      if (n.op == Op::kAttention) out.push_back(n.IntAttr("chunk").value_or(0));
    }
    return out;
  };
  const std::string hf = std::string("{\"architectures\": [\"X\"], ") + kSmallDecoder +
                         R"(, "model_type": "llama4_text", "attention_chunk_size": 16)";
  EXPECT_EQ(chunks(hf + "}"), (std::vector<std::int64_t>{16, 16, 16, 0}));
  EXPECT_EQ(chunks(hf + R"(, "no_rope_layers": [0, 1, 1, 0]})"),
            (std::vector<std::int64_t>{0, 16, 16, 0}));
  EXPECT_EQ(chunks("decoder_block: llama4\nbase_emb_dim: 64\nbase_num_query_heads: 4\n"
                   "base_mlp_dim: 128\nvocab_size: 100\nbase_num_decoder_layers: 4\n"
                   "chunk_attn_window_size: 16\nnope_layer_interval: 2\n"),
            (std::vector<std::int64_t>{16, 0, 16, 0}));
}

// Gemma 4's global layers have heads of their own (global_head_dim, global_num_kv_heads) and one
// projection for keys and values (share_kv_projections): per layer of width 64, 4 query heads of
// 16 locally with 2 KV heads; globally 4 heads of 32 with 1 KV head, K doubling as V.
TEST(ModelConfigTest, Gemma4GlobalLayersHaveTheirOwnHeads) {
  const std::string yml =
      "decoder_block: \"gemma4\"\nbase_emb_dim: 64\nbase_num_query_heads: 4\n"
      "base_num_kv_heads: 2\nhead_dim: 16\nbase_mlp_dim: 128\nvocab_size: 100\n"
      "base_num_decoder_layers: 6\nsliding_window_size: 16\nglobal_head_dim: 32\n"
      "global_num_kv_heads: 1\nshare_kv_projections: true\n";
  LoadedModel m = LoadOrDie(Source{"gemma4.yml", yml});
  double local = 0, global = 0;
  for (const Value& v : m.graph.values()) {
    if (v.origin != ValueOrigin::kInitializer || v.name.find("self_attn/") == std::string::npos)
      continue;
    const double n = static_cast<double>(*v.type.shape.NumElements());
    (v.name.find("layers.5/") != std::string::npos ? global : local) += n;
  }
  EXPECT_DOUBLE_EQ(local, 5 * 64.0 * (64 + 32 + 32 + 64));   // q, k, v, o
  EXPECT_DOUBLE_EQ(global, 64.0 * (128 + 32) + 128.0 * 64);  // q, shared k/v, o
}

// Multi-head latent attention (DeepSeek-V2 paper, section 2.1), DeepSeek-V3's sizes: per layer the
// query bottleneck (7168 x 1536, 1536 x 128 x 192), the key/value latent and the shared rotary key
// (7168 x (512 + 64)), the per-head keys and values expanded from the latent (512 x 128 x (128 +
// 128)) and the output (128 x 128 x 7168). The attention op sees keys of 192 and values of 128 a
// head and names the latent's widths for serving.
TEST(ModelConfigTest, LatentAttentionByHand) {
  ShapeOptions o;
  o.dims["seq"] = 16;
  LoadedModel m = LoadOrDie(Example("deepseek-v3.json"), o);
  double per_layer = 0;
  const Node* attention = nullptr;
  for (const Value& v : m.graph.values()) {
    if (v.origin == ValueOrigin::kInitializer && v.name.starts_with("/model/layers.0/self_attn/") &&
        v.type.shape.rank() == 2)
      per_layer += static_cast<double>(*v.type.shape.NumElements());
  }
  for (const Node& n : m.graph.nodes()) {
    if (n.op == Op::kAttention && attention == nullptr) attention = &n;
  }
  EXPECT_DOUBLE_EQ(per_layer, 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * (512 + 64) +
                                  512.0 * 128 * 256 + 128.0 * 128 * 7168);
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(m.graph.value(attention->input(1)).type.shape.dim(2).value(), 128 * 192);
  EXPECT_EQ(m.graph.value(attention->input(2)).type.shape.dim(2).value(), 128 * 128);
  EXPECT_EQ(attention->IntAttr("latent_kv"), 512);
  EXPECT_EQ(attention->IntAttr("latent_rope"), 64);
  // MaxText's YAML of the same model builds the same step.
  LoadedModel mt = LoadOrDie(Example("maxtext-deepseek3-671b.yml"), o);
  const std::vector<OpCost> a = ComputeOpCosts(m.graph), b = ComputeOpCosts(mt.graph);
  auto flops = [](const std::vector<OpCost>& costs) {
    double f = 0;
    for (const OpCost& c : costs) f += c.flops;
    return f;
  };
  EXPECT_NEAR(flops(a) / flops(b), 1.0, 1e-9);
}

// MoE models whose first layers are dense (DeepSeek) or whose layers alternate (Llama 4): the
// dense layers have an MLP of their own width, the others the experts.
TEST(ModelConfigTest, DenseAndMoeLayersAsTheConfigSaysThem) {
  auto experts_per_layer = [](const std::string& json) {
    auto m = LoadModel(Source{"config.json", json}, {});
    EXPECT_TRUE(m) << (m ? "" : m.error().message);
    std::vector<int> routed(4, 0);
    if (!m) return routed;
    for (const Value& v : m->graph.values()) {
      for (int i = 0; i < 4; ++i) {
        if (v.name.find("layers." + std::to_string(i) + "/mlp/experts.") != std::string::npos)
          ++routed[static_cast<std::size_t>(i)];
      }
    }
    return routed;
  };
  const std::string moe = std::string("{\"architectures\": [\"X\"], ") + kSmallDecoder +
                          R"(, "num_local_experts": 4, "num_experts_per_tok": 1)";
  EXPECT_EQ(experts_per_layer(moe + "}"), (std::vector<int>{3, 3, 3, 3}));
  EXPECT_EQ(experts_per_layer(moe + R"(, "first_k_dense_replace": 1})"),
            (std::vector<int>{0, 3, 3, 3}));
  EXPECT_EQ(experts_per_layer(moe + R"(, "interleave_moe_layer_step": 2})"),
            (std::vector<int>{0, 3, 0, 3}));
  EXPECT_EQ(experts_per_layer(moe + R"(, "mlp_only_layers": [3]})"),
            (std::vector<int>{3, 3, 3, 0}));
}

// Capacity dispatch, by hand: seq 16, 4 experts, 2 per token, factor 1.5 give each expert
// max(ceil(16 x 2 / 4) x 1.5, 1.5) = 12 slots per sequence, 48 over the experts. Per layer and
// sequence (batch 2): the dispatch and the combine matmuls are 2 x 48 x 16 x 64 FLOPs each, and
// the experts' gate projection 2 x 4 x (2 x 12) x 64 x 128 over the batch. Dropless, the same
// projection computes 16 x 2 x 2 = 64 routed tokens: 2 x 64 x 64 x 128.
TEST(ModelConfigTest, MoeCapacityDispatchByHand) {
  const std::string json = std::string("{\"architectures\": [\"X\"], ") + kSmallDecoder +
                           R"(, "num_local_experts": 4, "num_experts_per_tok": 2})";
  auto layer0 = [&](std::optional<double> cf) {
    ShapeOptions o;
    o.dims["seq"] = 16;
    o.batch = 2;
    o.moe_capacity_factor = cf;
    LoadedModel m = LoadOrDie(Source{"config.json", json}, o);
    const std::vector<OpCost> costs = ComputeOpCosts(m.graph);
    std::vector<double> flops;  // layer 0's MoE matmuls, in graph order
    for (const Node& n : m.graph.nodes()) {
      if (n.op_type == "MatMul" && n.loc.scope.find("layers.0/mlp") != std::string::npos)
        flops.push_back(costs[static_cast<std::size_t>(n.id)].flops);
    }
    return std::make_pair(flops, m.shape_notes);
  };
  const auto [dense, notes] = layer0(1.5);
  // gate (router), dispatch, expert gate/up/down, combine
  ASSERT_EQ(dense.size(), 6u);
  EXPECT_DOUBLE_EQ(dense[1], 2.0 * 2 * 48 * 16 * 64);
  EXPECT_DOUBLE_EQ(dense[2], 2.0 * 4 * 24 * 64 * 128);
  EXPECT_DOUBLE_EQ(dense[5], 2.0 * 2 * 16 * 48 * 64);
  EXPECT_NE(
      std::find_if(notes.begin(), notes.end(),
                   [](const std::string& n) { return n.starts_with("MoE capacity factor 1.50"); }),
      notes.end());
  const auto [dropless, none] = layer0(std::nullopt);
  ASSERT_EQ(dropless.size(), 4u);  // router, gate/up/down
  EXPECT_DOUBLE_EQ(dropless[1], 2.0 * 64 * 64 * 128);
}

}  // namespace
}  // namespace tpudoctor

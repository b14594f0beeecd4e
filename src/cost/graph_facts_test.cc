#include "src/cost/graph_facts.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/test_util.h"
#include "tpudoctor/frontend/model_config.h"

namespace tpudoctor {
namespace {

// The attention projections MaxText's offloading remat keeps (query/key/value/out_proj): in a
// Llama config's graph, the four weight matmuls around each Attention op, and none of the MLP's
// or the output head's.
TEST(GraphFactsTest, AttentionProjectionsAreTheFourMatmulsAroundTheCore) {
  const std::string json = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
      "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100})";
  ShapeOptions o;
  o.dims["seq"] = 16;
  auto m = LoadModel(Source{"config.json", json}, o);
  ASSERT_TRUE(m) << m.error().message;
  const GraphFacts f = AnalyzeGraph(m->graph);
  std::vector<std::string> marked;
  for (const Node& n : m->graph.nodes()) {
    if (f.attention_projection[static_cast<std::size_t>(n.id)]) marked.push_back(n.loc.scope);
  }
  ASSERT_EQ(marked.size(), 8u);  // 2 layers x (Q, K, V, O)
  for (const std::string& scope : marked) EXPECT_NE(scope.find("self_attn"), std::string::npos);
}

// The experts of a small MoE config (4 layers, 4 experts, 2 per token, hidden 64, MLP 128) at
// batch 2 x seq 16: 32 tokens x 2 choices = 64 routed, 16 slots per expert. Per layer the experts'
// gate, up and down weights are 3 x 4 x 64 x 128 elements; the tokens they are sent ([4, 16, 64],
// read by gate and up: counted once) and the results taken back ([4, 16, 64]) 8,192 elements.
TEST(GraphFactsTest, ExpertMatmulsTheirWeightsAndTheirExchange) {
  const std::string json = R"({"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
      "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
      "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
      "num_local_experts": 4, "num_experts_per_tok": 2})";
  ShapeOptions o;
  o.dims["seq"] = 16;
  o.batch = 2;
  auto m = LoadModel(Source{"config.json", json}, o);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->graph.facts().experts, 4);
  const GraphFacts f = AnalyzeGraph(m->graph);
  EXPECT_EQ(std::count(f.expert_matmul.begin(), f.expert_matmul.end(), true), 12);
  EXPECT_DOUBLE_EQ(f.expert_params, 4 * 3 * 4.0 * 64 * 128);
  EXPECT_DOUBLE_EQ(f.expert_exchange_elements, 4 * 2 * 4.0 * 16 * 64);
  EXPECT_EQ(std::count(f.moe_dispatch.begin(), f.moe_dispatch.end(), true), 0);
  EXPECT_DOUBLE_EQ(f.expert_fill, 1);
  // Capacity dispatch, factor 1.5: 12 slots per expert and sequence, 48 in all, of which the 16
  // tokens x 2 choices fill two thirds; a dispatch and a combine matmul per layer, no model work.
  o.moe_capacity_factor = 1.5;
  auto capped = LoadModel(Source{"config.json", json}, o);
  ASSERT_TRUE(capped) << capped.error().message;
  const GraphFacts c = AnalyzeGraph(capped->graph);
  EXPECT_EQ(std::count(c.expert_matmul.begin(), c.expert_matmul.end(), true), 12);
  EXPECT_EQ(std::count(c.moe_dispatch.begin(), c.moe_dispatch.end(), true), 8);
  EXPECT_DOUBLE_EQ(c.expert_fill, 32.0 / 48);
  for (const Node& n : capped->graph.nodes()) {
    const auto i = static_cast<std::size_t>(n.id);
    if (c.moe_dispatch[i]) {
      EXPECT_EQ(c.UsefulShare(i), 0);
    }
    if (c.expert_matmul[i]) {
      EXPECT_DOUBLE_EQ(c.UsefulShare(i), 32.0 / 48);
    }
  }
}

}  // namespace
}  // namespace tpudoctor

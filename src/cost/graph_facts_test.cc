#include "src/cost/graph_facts.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tpudoctor

#include "tpudoctor/ir/geometry.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/test_util.h"

namespace tpudoctor {
namespace {

TEST(GeometryTest, ConvLabels) {
  auto nhwc = ParseConvLabels("b01f_01io->b01f", 1);
  ASSERT_TRUE(nhwc);
  EXPECT_EQ(nhwc->input_feature, 3);
  EXPECT_EQ(nhwc->kernel_input_feature, 2);
  EXPECT_EQ(nhwc->kernel_output_feature, 3);
  EXPECT_EQ(nhwc->kernel_spatial, (std::vector<std::int64_t>{0, 1}));
  EXPECT_FALSE(nhwc->channels_second());
  auto nchw = ParseConvLabels("bf01_oi01->bf01", 32);
  ASSERT_TRUE(nchw);
  EXPECT_TRUE(nchw->channels_second());
  EXPECT_EQ(nchw->feature_groups, 32);
  EXPECT_EQ(nchw->output_spatial, (std::vector<std::int64_t>{2, 3}));
  auto conv3d = ParseConvLabels("b012f_012io->b012f");
  ASSERT_TRUE(conv3d);
  EXPECT_EQ(conv3d->output_rank(), 5u);
  for (const char* bad : {"", "b01f", "b01f_01io", "bx1f_01io->b01f", "b02f_01io->b01f",
                          "b01f_01i->b01f", "b01_01io->b01f", "b0f_01io->b01f"}) {
    EXPECT_FALSE(ParseConvLabels(bad)) << bad;
  }
}

const Node& NodeNamed(const Graph& g, std::string_view name) {
  for (const Node& n : g.nodes()) {
    if (n.name == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return g.nodes().front();
}

TEST(GeometryTest, OnnxMatrixProductsGetDimensionNumbersUnlessTheyBroadcast) {
  const Graph g = testing::ParseOrDie(R"(graph g {
  input %x: f32[8,16,32]
  input %q: f32[4,2,16,32]
  input %k: f32[4,2,32,16]
  input %kb: f32[2,32,16]
  init %w: f32[32,64]
  init %a: f32[64,32]
  %y: f32[8,16,64] = MatMul[matmul](%x, %w) name="shared"
  %s: f32[4,2,16,16] = MatMul[matmul](%q, %k) name="batched"
  %t: f32[4,2,16,16] = MatMul[matmul](%q, %kb) name="broadcast"
  %g: f32[32,32] = Gemm[matmul](%w, %a) {transA=1, transB=1} name="gemm"
  output %y
  output %s
  output %t
  output %g
})");
  const Node& shared = NodeNamed(g, "shared");  // a weight shared over the batch: rows of M
  ASSERT_TRUE(shared.dot);
  EXPECT_TRUE(shared.dot->lhs_batch.empty());
  EXPECT_EQ(shared.dot->lhs_contracting, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(shared.dot->rhs_contracting, (std::vector<std::int64_t>{0}));
  const Node& batched = NodeNamed(g, "batched");
  ASSERT_TRUE(batched.dot);
  EXPECT_EQ(batched.dot->lhs_batch, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(batched.dot->rhs_contracting, (std::vector<std::int64_t>{2}));
  EXPECT_FALSE(NodeNamed(g, "broadcast").dot);  // numpy broadcasting: no dot expresses it
  const Node& gemm = NodeNamed(g, "gemm");
  ASSERT_TRUE(gemm.dot);
  EXPECT_EQ(gemm.dot->lhs_contracting, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(gemm.dot->rhs_contracting, (std::vector<std::int64_t>{1}));
}

TEST(GeometryTest, PoolWindowsFromOnnxAndXla) {
  const Graph g = testing::ParseOrDie(R"(graph g {
  input %x: f32[1,8,32,32]
  input %h: f32[1,32,32,8]
  input %zero: f32[]
  %p: f32[1,8,16,16] = MaxPool[pool](%x) {kernel_shape=[3, 3]} name="onnx"
  %r: f32[1,16,16,8] = "hlo::reduce-window"[pool](%h, %zero) {window="{size=1x2x2x1 stride=1x2x2x1}"} name="xla"
  %m: f32[1,8,1,1] = GlobalAveragePool[pool](%x) name="global"
  output %p
  output %r
  output %m
})");
  EXPECT_EQ(NodeNamed(g, "onnx").window, (std::vector<std::int64_t>{3, 3}));
  EXPECT_EQ(NodeNamed(g, "xla").window, (std::vector<std::int64_t>{1, 2, 2, 1}));
  EXPECT_FALSE(NodeNamed(g, "global").window);
}

}  // namespace
}  // namespace tpudoctor

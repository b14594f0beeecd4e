#include "tpudoctor/analysis/dynamism.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"
#include "tpudoctor/ir/text.h"

namespace tpudoctor {
namespace {

Graph Parse(const char* text) { return testing::ParseOrDie(text); }

TEST(DynamismTest, ShapeArithmeticIsCompileTime) {
  Graph g = Parse(R"(graph g {
  input %x: f32[batch,16]
  %s: s64[2] = Shape[shape_of](%x)
  %y: f32[batch,16] = Reshape[layout](%x, %s)
})");
  Dynamism d(g);
  EXPECT_TRUE(d.roots().empty());
  EXPECT_TRUE(d.facts(g, *g.FindValue("x")).runtime_data);
  EXPECT_FALSE(d.facts(g, *g.FindValue("s")).runtime_data);
  EXPECT_FALSE(d.facts(g, *g.FindValue("y")).dyn_shape);
}

TEST(DynamismTest, OneRootAndItsKnockOns) {
  // NonZero is the root. The Reshape downstream reads a shape computed from NonZero's output:
  // a knock-on, not a second root.
  Graph g = Parse(R"(graph g {
  input %x: f32[16]
  %nz: s64[1,?] = NonZero[data_dependent](%x)
  %s: s64[2] = Shape[shape_of](%nz)
  %flat: s64[?] = Reshape[layout](%nz, %s)
  %f: f32[?] = Cast[cast](%flat)
})");
  Dynamism d(g);
  ASSERT_EQ(d.roots().size(), 1u);
  EXPECT_EQ(g.node(d.roots()[0].node).op_type, "NonZero");
  EXPECT_EQ(d.roots()[0].downstream, 2);  // flat, f (the Shape output is a shape, not dynamic)
  EXPECT_TRUE(d.facts(g, *g.FindValue("s")).from_dyn_shape);
}

TEST(DynamismTest, RuntimeShapeInputIsARoot) {
  Graph g = Parse(R"(graph g {
  input %scores: f32[1,100]
  input %counts: s64[1]
  %vals: f32[1,?], %inds: s64[1,?] = TopK[sort_topk](%scores, %counts)
})");
  Dynamism d(g);
  ASSERT_EQ(d.roots().size(), 1u);
  EXPECT_EQ(d.roots()[0].kind, RootKind::kRuntimeShapeInput);
  EXPECT_NE(d.roots()[0].detail.find("`K`"), std::string::npos);
}

TEST(DynamismTest, FoldedConstantsAreNotRuntimeData) {
  Graph g = Parse(R"(graph g {
  input %scores: f32[1,100]
  %k: s64[1] known=[5] = Constant[constant]()
  %vals: f32[1,5], %inds: s64[1,5] = TopK[sort_topk](%scores, %k)
})");
  EXPECT_TRUE(Dynamism(g).roots().empty());
}

}  // namespace
}  // namespace tpudoctor

#include "tpudoctor/ir/text.h"

#include <gtest/gtest.h>

#include "tpudoctor/ir/verify.h"

namespace tpudoctor {
namespace {

constexpr const char* kMlp = R"(graph mlp {
  input %x: f32[batch,4]
  init %w: f32[4,4]
  init %shape: s64[2] known=[batch,4]
  %y: f32[batch,4] = MatMul[matmul](%x, %w) name="fc" scope="/layers/0"
  %z: f32[batch,4] = Relu[elementwise](%y) {alpha=0.5, axes=[1,-2], mode="same", names=["a","b"]}
  %r: f32[batch,4] = Reshape[layout](%z, %shape)
  output %r
}
)";

TEST(IrTextTest, BoundedDimsRoundTrip) {
  const std::string text =
      "graph g {\n  input %x: f32[\"<=16\",4]\n  %y: f32[\"<=16\",4] = Abs[elementwise](%x)\n"
      "  output %y\n}\n";
  auto g = ParseGraphText(text);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Dim& d = g->value(g->inputs()[0]).type.shape.dim(0);
  EXPECT_TRUE(d.is_bounded());
  EXPECT_EQ(d.bound(), 16);
  EXPECT_EQ(PrintGraphText(*g), text);
}

TEST(IrTextTest, ParsesAndPrintsBackTheSameText) {
  auto g = ParseGraphText(kMlp);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_TRUE(VerifyGraph(*g).empty());
  EXPECT_EQ(g->nodes().size(), 3u);
  EXPECT_EQ(g->node(0).loc.scope, "/layers/0");
  EXPECT_EQ(g->node(1).IntsAttr("axes"), (std::vector<std::int64_t>{1, -2}));
  EXPECT_EQ(PrintGraphText(*g), kMlp);
}

TEST(IrTextTest, TopologicalOrderPutsProducersFirst) {
  auto g = ParseGraphText(kMlp);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->topo_order(), (std::vector<NodeId>{0, 1, 2}));
  EXPECT_EQ(g->value(*g->FindValue("y")).users, std::vector<NodeId>{1});
}

TEST(IrTextTest, SubgraphsRoundTrip) {
  const char* text = R"(graph main {
  input %c: pred[]
  input %x: f32[4]
  %y: f32[4] = If[control_flow](%c)
  subgraph then_branch graph then {
    capture %x: f32[4]
    %t: f32[4] = Neg[elementwise](%x)
    output %t
  }
  subgraph else_branch graph else {
    capture %x: f32[4]
    %e: f32[4] = Relu[elementwise](%x)
    output %e
  }
  output %y
}
)";
  auto g = ParseGraphText(text);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->node(0).subgraphs.size(), 2u);
  EXPECT_TRUE(VerifyGraph(*g).empty());
  EXPECT_EQ(PrintGraphText(*g), text);
}

TEST(IrTextTest, ErrorsCarryLineAndColumn) {
  auto g = ParseGraphText("graph g {\n  input %x: f99[4]\n}\n");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message.rfind("2:", 0), 0u) << g.error().message;
  EXPECT_NE(g.error().message.find("unknown element type"), std::string::npos);
}

TEST(IrTextTest, RejectsUseBeforeDefinitionAndDuplicates) {
  EXPECT_FALSE(ParseGraphText("graph g {\n  %y: f32[1] = Relu[elementwise](%x)\n}\n").ok());
  EXPECT_FALSE(ParseGraphText("graph g {\n  input %x: f32[1]\n  input %x: f32[1]\n}\n").ok());
  EXPECT_FALSE(ParseGraphText("graph g {\n  input %x: f32[1]\n").ok());  // unbalanced
  EXPECT_FALSE(ParseGraphText("graph g { input %x: f32[99999999999999999999] }").ok());
}

TEST(IrTextTest, CycleIsAnError) {
  Graph g("cyclic");
  ValueId a = g.AddValue("a", {}, ValueOrigin::kNodeOutput);
  ValueId b = g.AddValue("b", {}, ValueOrigin::kNodeOutput);
  Node n1;
  n1.name = "n1";
  n1.op_type = "Relu";
  n1.inputs = {b};
  n1.outputs = {a};
  Node n2;
  n2.name = "n2";
  n2.op_type = "Relu";
  n2.inputs = {a};
  n2.outputs = {b};
  g.AddNode(std::move(n1));
  g.AddNode(std::move(n2));
  auto r = g.Finalize();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cycle"), std::string::npos);
}

TEST(IrTextTest, VerifyCatchesBrokenInvariants) {
  auto g = ParseGraphText(kMlp);
  ASSERT_TRUE(g.ok());
  g->mutable_value(*g->FindValue("y")).users.push_back(0);  // MatMul does not read `y`
  EXPECT_FALSE(VerifyGraph(*g).empty());
}

}  // namespace
}  // namespace tpudoctor

// Hand-computed shapes for the ONNX frontend's own propagation, on graphs written in the IR text
// form with unknown output shapes (`[*]`) for the propagation to fill in.
#include "src/frontends/onnx/shape_infer.h"

#include <gtest/gtest.h>

#include "tpudoctor/ir/text.h"

namespace tpudoctor::onnx_frontend {
namespace {

Graph Propagated(const std::string& text, std::optional<std::int64_t> rebatch = std::nullopt) {
  auto g = ParseGraphText(text);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  PropagateShapes(*g, rebatch);
  return std::move(*g);
}

std::string TypeOf(const Graph& g, const char* name) {
  return g.value(*g.FindValue(name)).type.ToString();
}

TEST(ShapeInferTest, ConvAndPoolFollowTheFormula) {
  Graph g = Propagated(R"(graph g {
  input %x: f32[batch,3,224,224]
  init %w: f32[64,3,7,7]
  %c: unknown[*] = Conv[conv](%x, %w) {pads=[3,3,3,3], strides=[2,2]}
  %p: unknown[*] = MaxPool[pool](%c) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2]}
  %q: unknown[*] = AveragePool[pool](%p) {kernel_shape=[2,2], strides=[2,2], ceil_mode=1}
  %gp: unknown[*] = GlobalAveragePool[pool](%q)
  %f: unknown[*] = Flatten[layout](%gp) {axis=1}
})");
  EXPECT_EQ(TypeOf(g, "c"), "f32[batch,64,112,112]");  // (224 + 6 - 7) / 2 + 1
  EXPECT_EQ(TypeOf(g, "p"), "f32[batch,64,56,56]");    // (112 + 2 - 3) / 2 + 1
  EXPECT_EQ(TypeOf(g, "q"), "f32[batch,64,28,28]");
  EXPECT_EQ(TypeOf(g, "gp"), "f32[batch,64,1,1]");
  EXPECT_EQ(TypeOf(g, "f"), "f32[batch,64]");
}

TEST(ShapeInferTest, ShapeArithmeticFoldsWithSymbols) {
  // Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): the torch.flatten pattern.
  Graph g = Propagated(R"(graph g {
  input %x: f32[batch,3,8,8]
  init %zero: s64[] known=[0]
  init %axes: s64[1] known=[0]
  init %minus_one: s64[1] known=[-1]
  %s: unknown[*] = Shape[shape_of](%x)
  %b: unknown[*] = Gather[gather](%s, %zero) {axis=0}
  %b1: unknown[*] = Unsqueeze[layout](%b, %axes)
  %t: unknown[*] = Concat[layout](%b1, %minus_one) {axis=0}
  %y: unknown[*] = Reshape[layout](%x, %t)
})");
  EXPECT_EQ(g.value(*g.FindValue("s")).known_ints->size(), 4u);
  EXPECT_EQ(TypeOf(g, "t"), "s64[2]");
  EXPECT_EQ(TypeOf(g, "y"), "f32[batch,192]");  // -1 = batch*3*8*8 / batch
}

TEST(ShapeInferTest, MatMulBroadcastsBatchDims) {
  Graph g = Propagated(R"(graph g {
  input %a: f32[8,1,128,64]
  input %b: f32[12,64,32]
  input %v: f32[64]
  %c: unknown[*] = MatMul[matmul](%a, %b)
  %d: unknown[*] = MatMul[matmul](%a, %v)
})");
  EXPECT_EQ(TypeOf(g, "c"), "f32[8,12,128,32]");
  EXPECT_EQ(TypeOf(g, "d"), "f32[8,1,128]");
}

TEST(ShapeInferTest, SliceClampsAndSteps) {
  Graph g = Propagated(R"(graph g {
  input %x: f32[10,20]
  init %starts: s64[2] known=[1,-5]
  init %ends: s64[2] known=[9223372036854775807,100]
  init %axes: s64[2] known=[0,1]
  init %steps: s64[2] known=[3,1]
  %y: unknown[*] = Slice[layout](%x, %starts, %ends, %axes, %steps)
})");
  EXPECT_EQ(TypeOf(g, "y"), "f32[3,5]");  // rows 1,4,7; columns 15..19
}

TEST(ShapeInferTest, ExpandWithMinusOnePatternFolds) {
  // The exporters' `Where(Equal(shape, -1), ones, shape)` idiom around Expand.
  Graph g = Propagated(R"(graph g {
  input %tok: f32[1,1,768]
  init %shape: s64[3] known=[8,-1,-1]
  init %minus_one: s64[] known=[-1]
  %n: unknown[*] = Shape[shape_of](%shape)
  %ones: unknown[*] = ConstantOfShape[constant](%n) {value=1}
  %neg: unknown[*] = Mul[elementwise](%ones, %minus_one)
  %eq: unknown[*] = Equal[elementwise](%shape, %neg)
  %target: unknown[*] = Where[elementwise](%eq, %ones, %shape)
  %y: unknown[*] = Expand[layout](%tok, %target)
})");
  EXPECT_EQ(TypeOf(g, "y"), "f32[8,1,768]");
}

TEST(ShapeInferTest, UnknownStaysUnknown) {
  Graph g = Propagated(R"(graph g {
  input %x: f32[4,6]
  input %target: s64[2]
  %y: unknown[*] = Reshape[layout](%x, %target)
  %z: unknown[*] = NonZero[data_dependent](%x)
})");
  EXPECT_EQ(TypeOf(g, "y"), "f32[?,?]");  // rank from the target's length, sizes from data
  EXPECT_EQ(TypeOf(g, "z"), "s64[2,?]");
}

TEST(ShapeInferTest, RebatchRepairsBatchOneReshapeTargets) {
  Graph g = Propagated(R"(graph g {
  input %x: f32[4,256,768]
  init %heads: s64[4] known=[1,256,-1,64]
  init %flat: s64[2] known=[-1,768]
  init %unflat: s64[3] known=[1,256,768]
  %h: unknown[*] = Reshape[layout](%x, %heads)
  %f: unknown[*] = Reshape[layout](%x, %flat)
  %u: unknown[*] = Reshape[layout](%f, %unflat)
})",
                       4);
  EXPECT_EQ(TypeOf(g, "h"), "f32[4,256,12,64]");
  EXPECT_EQ(TypeOf(g, "f"), "f32[1024,768]");
  EXPECT_EQ(TypeOf(g, "u"), "f32[4,256,768]");
}

}  // namespace
}  // namespace tpudoctor::onnx_frontend

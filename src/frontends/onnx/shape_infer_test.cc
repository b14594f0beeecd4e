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

TEST(ShapeInferTest, TrainingModeBatchNormReturnsPerChannelStatistics) {
  // torch.onnx.export(..., training=TrainingMode.TRAINING) keeps each BatchNorm with
  // training_mode=1 and its running mean and variance as outputs 1 and 2, shaped like the scale.
  Graph g = Propagated(R"(graph g {
  input %x: f32[batch,64,56,56]
  init %scale: f32[64]
  init %bias: f32[64]
  init %mean: f32[64]
  init %var: f32[64]
  %y: unknown[*], %running_mean: unknown[*], %running_var: unknown[*] = BatchNormalization[normalization](%x, %scale, %bias, %mean, %var) {training_mode=1}
})");
  EXPECT_EQ(TypeOf(g, "y"), "f32[batch,64,56,56]");
  EXPECT_EQ(TypeOf(g, "running_mean"), "f32[64]");
  EXPECT_EQ(TypeOf(g, "running_var"), "f32[64]");
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

TEST(ShapeInferTest, TorchPadPatternFoldsThroughReversedSliceAndTranspose) {
  // torch 1.13's F.pad export: torch's pads (last dim first: W left/right, H left/right, padded
  // with zeros to 2 x rank) as a [-1, 2] matrix, rows reversed by a
  // step -1 slice to the end (-INT64_MAX), transposed and flattened into ONNX's begins-then-ends.
  Graph g = Propagated(R"(graph g {
  input %x: f32[1,56,56,96]
  init %pads_torch: s64[8] known=[0,0,1,2,3,4,0,0]
  init %rows: s64[2] known=[-1,2]
  init %start: s64[1] known=[-1]
  init %end: s64[1] known=[-9223372036854775807]
  init %axis: s64[1] known=[0]
  init %step: s64[1] known=[-1]
  init %flat: s64[1] known=[-1]
  %m: unknown[*] = Reshape[layout](%pads_torch, %rows)
  %r: unknown[*] = Slice[layout](%m, %start, %end, %axis, %step)
  %t: unknown[*] = Transpose[layout](%r) {perm=[1,0]}
  %pads: unknown[*] = Reshape[layout](%t, %flat)
  %y: unknown[*] = Pad[layout](%x, %pads) {mode="constant"}
})");
  EXPECT_EQ(TypeOf(g, "r"), "s64[4,2]");  // all four rows: the end clamps to -1, not 0
  std::vector<std::int64_t> pads;
  for (const Dim& d : *g.value(*g.FindValue("pads")).known_ints) pads.push_back(d.value());
  EXPECT_EQ(pads, (std::vector<std::int64_t>{0, 3, 1, 0, 0, 4, 2, 0}));  // begins, then ends
  EXPECT_EQ(TypeOf(g, "y"), "f32[1,63,59,96]");                          // H + 3 + 4, W + 1 + 2
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

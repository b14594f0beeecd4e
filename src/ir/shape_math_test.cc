#include "tpudoctor/ir/shape_math.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace tpudoctor {
namespace {

const Dim kBatch = Dim::Symbol("batch");

TEST(ShapeMathTest, ArithmeticKeepsSymbolsWhereItCan) {
  EXPECT_EQ(MulDims(Dim::Static(3), Dim::Static(4)), Dim::Static(12));
  EXPECT_EQ(MulDims(kBatch, Dim::Static(1)), kBatch);
  EXPECT_TRUE(MulDims(kBatch, Dim::Static(2)).is_unknown());
  EXPECT_TRUE(MulDims(Dim::Static(std::int64_t{1} << 62), Dim::Static(4)).is_unknown());
  EXPECT_EQ(AddDims(kBatch, Dim::Static(0)), kBatch);
  EXPECT_EQ(NegDim(Dim::Static(5)), Dim::Static(-5));
  EXPECT_TRUE(NegDim(Dim::Static(std::numeric_limits<std::int64_t>::min())).is_unknown());
  EXPECT_EQ(FloorDivDims(Dim::Static(-7), Dim::Static(2)), Dim::Static(-4));
  EXPECT_EQ(FloorDivDims(kBatch, kBatch), Dim::Static(1));
  EXPECT_TRUE(FloorDivDims(Dim::Static(7), Dim::Static(0)).is_unknown());
  EXPECT_TRUE(SizeDim(-1).is_unknown());
}

TEST(ShapeMathTest, Broadcasting) {
  const Shape a({kBatch, Dim::Static(1), Dim::Static(8)});
  const Shape b({Dim::Static(4), Dim::Static(1)});
  const Shape* both[] = {&a, &b};
  auto out = BroadcastShapes(both);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, Shape({kBatch, Dim::Static(4), Dim::Static(8)}));
  EXPECT_TRUE(BroadcastDim(kBatch, Dim::Symbol("seq")).is_unknown());
  const Shape unknown = Shape::UnknownRank();
  const Shape* with_unknown[] = {&a, &unknown};
  EXPECT_FALSE(BroadcastShapes(with_unknown));
}

TEST(ShapeMathTest, Axes) {
  EXPECT_EQ(NormalizeAxis(-1, 4), 3u);
  EXPECT_EQ(NormalizeAxis(0, 4), 0u);
  EXPECT_FALSE(NormalizeAxis(4, 4));
  EXPECT_FALSE(NormalizeAxis(-5, 4));
}

TEST(ShapeMathTest, SlidingWindows) {
  const Dim in = Dim::Static(224);
  // ResNet's stem: 7x7 stride 2 pad 3+3 → 112; its max pool 3x3 stride 2 pad 1+1 → 56.
  EXPECT_EQ(WindowOutput(in, 7, 2, 1, WindowPadding::kExplicit, 6), Dim::Static(112));
  EXPECT_EQ(WindowOutput(Dim::Static(112), 3, 2, 1, WindowPadding::kExplicit, 2), Dim::Static(56));
  EXPECT_EQ(WindowOutput(Dim::Static(5), 2, 2, 1, WindowPadding::kExplicit, 0, true),
            Dim::Static(3));
  EXPECT_EQ(WindowOutput(Dim::Static(5), 2, 2, 1, WindowPadding::kExplicit, 0, false),
            Dim::Static(2));
  EXPECT_EQ(WindowOutput(in, 3, 2, 1, WindowPadding::kSame), Dim::Static(112));
  EXPECT_EQ(WindowOutput(Dim::Static(7), 3, 2, 1, WindowPadding::kSame), Dim::Static(4));
  EXPECT_EQ(WindowOutput(in, 3, 1, 2, WindowPadding::kValid), Dim::Static(220));  // dilated span 5
  EXPECT_EQ(WindowOutput(Dim::Static(2), 5, 1, 1, WindowPadding::kValid), Dim::Static(0));
  EXPECT_TRUE(WindowOutput(Dim::Static(2), 5, 1, 1, WindowPadding::kExplicit, 0).is_unknown());
  EXPECT_TRUE(WindowOutput(kBatch, 3, 1, 1, WindowPadding::kSame).is_unknown());
  EXPECT_TRUE(WindowOutput(in, 0, 1, 1, WindowPadding::kValid).is_unknown());
  EXPECT_TRUE(WindowOutput(in, 3, 0, 1, WindowPadding::kValid).is_unknown());
  EXPECT_TRUE(WindowOutput(in, std::int64_t{1} << 62, 1, 8, WindowPadding::kValid).is_unknown());
}

}  // namespace
}  // namespace tpudoctor

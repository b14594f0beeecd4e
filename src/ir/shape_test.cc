#include "tpudoctor/ir/shape.h"

#include <gtest/gtest.h>

#include <limits>

namespace tpudoctor {
namespace {

TEST(ShapeTest, StaticSizeInBytes) {
  TensorType t{ValueKind::kTensor, DType::kFloat32, Shape::OfStatic({2, 3, 4})};
  ASSERT_TRUE(t.SizeInBytes().has_value());
  EXPECT_EQ(*t.SizeInBytes(), 96);
  EXPECT_EQ(t.ToString(), "f32[2,3,4]");
}

TEST(ShapeTest, SymbolicShapeHasNoSize) {
  TensorType t{ValueKind::kTensor, DType::kBFloat16, Shape({Dim::Symbol("batch"), Dim::Static(8)})};
  EXPECT_FALSE(t.SizeInBytes().has_value());
  EXPECT_EQ(t.ToString(), "bf16[batch,8]");
}

TEST(ShapeTest, HugeDimsDoNotOverflow) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() / 2;
  TensorType t{ValueKind::kTensor, DType::kFloat64, Shape::OfStatic({big, 4})};
  EXPECT_FALSE(t.shape.NumElements().has_value());
  EXPECT_FALSE(t.SizeInBytes().has_value());
  TensorType one{ValueKind::kTensor, DType::kFloat64, Shape::OfStatic({big})};
  EXPECT_TRUE(one.shape.NumElements().has_value());
  EXPECT_FALSE(one.SizeInBytes().has_value());  // bits overflow
}

TEST(ShapeTest, SubByteTypesRoundUp) {
  TensorType t{ValueKind::kTensor, DType::kInt4, Shape::OfStatic({3})};
  EXPECT_EQ(*t.SizeInBytes(), 2);
}

TEST(DTypeTest, ParsesShortAndLongNames) {
  EXPECT_EQ(ParseDType("f64"), DType::kFloat64);
  EXPECT_EQ(ParseDType("float64"), DType::kFloat64);
  EXPECT_EQ(ParseDType("bf16"), DType::kBFloat16);
  EXPECT_FALSE(ParseDType("float65").has_value());
  for (const auto& t : AllDTypes()) EXPECT_EQ(ParseDType(t.name), t.dtype);
}

}  // namespace
}  // namespace tpudoctor

namespace tpudoctor {
namespace {

TEST(DimTest, BoundedDimsAreTheirOwnKind) {
  const Dim d = Dim::Bounded(4096);
  EXPECT_TRUE(d.is_bounded());
  EXPECT_FALSE(d.is_static());
  EXPECT_FALSE(d.is_symbol());
  EXPECT_EQ(d.bound(), 4096);
  EXPECT_EQ(d.ToString(), "<=4096");
  EXPECT_FALSE(Shape({Dim::Static(2), d}).is_static());
  EXPECT_FALSE(TensorType({ValueKind::kTensor, DType::kFloat32, Shape({d})}).SizeInBytes());
}

}  // namespace
}  // namespace tpudoctor

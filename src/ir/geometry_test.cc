#include "tpudoctor/ir/geometry.h"

#include <gtest/gtest.h>

#include <vector>

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

}  // namespace
}  // namespace tpudoctor

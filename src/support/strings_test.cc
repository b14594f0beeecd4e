// ClosestMatch: the "did you mean" of the CLI and the target lookup.
#include "tpudoctor/support/strings.h"

#include <gtest/gtest.h>

namespace tpudoctor {
namespace {

TEST(ClosestMatchTest, SuggestsForTypingSlips) {
  const std::vector<std::string> commands = {"check", "estimate", "plan", "logs", "rules"};
  EXPECT_EQ(ClosestMatch("chek", commands), "check");
  EXPECT_EQ(ClosestMatch("pln", commands), "plan");
  EXPECT_EQ(ClosestMatch("estiamte", commands), "estimate");  // two letters swapped
  const std::vector<std::string> targets = {"tpu-v5e", "tpu-v5p", "tpu-v6e", "nvidia-h100"};
  EXPECT_EQ(ClosestMatch("tpuv5e", targets), "tpu-v5e");   // `-` ignored
  EXPECT_EQ(ClosestMatch("TPU_V6E", targets), "tpu-v6e");  // case and `_` ignored
  const std::vector<std::string> flags = {"--batch", "--target", "--train"};
  EXPECT_EQ(ClosestMatch("--traget", flags), "--target");
  EXPECT_EQ(ClosestMatch("--batchsize", flags), "--batch");  // a known name run on
}

TEST(ClosestMatchTest, StaysQuietWhenNothingIsClose) {
  const std::vector<std::string> targets = {"tpu-v2", "tpu-v5e", "nvidia-h100"};
  EXPECT_EQ(ClosestMatch("tpu-v9", targets), std::nullopt);  // another version, not a slip
  EXPECT_EQ(ClosestMatch("frobnicate", targets), std::nullopt);
  EXPECT_EQ(ClosestMatch("", targets), std::nullopt);
  EXPECT_EQ(ClosestMatch("tpu-v5e", {}), std::nullopt);
}

}  // namespace
}  // namespace tpudoctor

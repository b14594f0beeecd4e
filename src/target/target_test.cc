#include "tpudoctor/target/target.h"

#include <gtest/gtest.h>

#include <set>

namespace tpudoctor {
namespace {

TEST(TargetTest, EveryAcceleratorTheIssueNamesIsThere) {
  std::set<std::string> names;
  for (const TargetSpec& t : AllTargets()) names.insert(t.name);
  for (const char* want : {"tpu-v2", "tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-7x",
                           "nvidia-v100", "nvidia-a100", "nvidia-h100", "nvidia-h200",
                           "nvidia-b200", "nvidia-gb200", "nvidia-gb300", "nvidia-b300"}) {
    EXPECT_TRUE(names.count(want)) << want;
  }
}

TEST(TargetTest, FiguresAreSourcedAndSane) {
  for (const TargetSpec& t : AllTargets()) {
    SCOPED_TRACE(t.name);
    EXPECT_FALSE(t.sources.empty());
    ASSERT_TRUE(t.hbm_gib.has_value());
    EXPECT_GT(*t.hbm_gib, 0);
    ASSERT_TRUE(t.hbm_gbps.has_value());
    EXPECT_GT(*t.hbm_gbps, 0);
    EXPECT_TRUE(t.kind == "tpu" || t.kind == "gpu");
    if (t.is_tpu()) {
      ASSERT_TRUE(t.mxu_dim.has_value());
      EXPECT_TRUE(*t.mxu_dim == 128 || *t.mxu_dim == 256);
      EXPECT_TRUE(t.bf16_tflops.has_value());
    }
  }
}

TEST(TargetTest, TpuDtypeFacts) {
  const TargetSpec& v5e = **FindTarget("tpu-v5e");
  // float64 compiles through XLA:TPU's 64-bit rewrite (float32 pairs): slow, not unsupported.
  EXPECT_EQ(v5e.RuleFor(DType::kFloat64).support, DTypeSupport::kSlow);
  EXPECT_EQ(v5e.RuleFor(DType::kComplex128).support, DTypeSupport::kUnsupported);
  EXPECT_EQ(v5e.RuleFor(DType::kString).support, DTypeSupport::kUnsupported);
  EXPECT_EQ(v5e.RuleFor(DType::kInt64).support, DTypeSupport::kSlow);
  EXPECT_EQ(v5e.RuleFor(DType::kFloat16).support, DTypeSupport::kSlow);
  EXPECT_EQ(v5e.RuleFor(DType::kBFloat16).support, DTypeSupport::kNative);
  EXPECT_EQ(v5e.RuleFor(DType::kComplex64).support, DTypeSupport::kNative);
  EXPECT_EQ((*FindTarget("tpu-v6e"))->mxu_dim, 256);
  EXPECT_EQ((*FindTarget("nvidia-h100"))->RuleFor(DType::kFloat64).support, DTypeSupport::kNative);
}

// Cloud TPU sells slices up to a pod: v5e and v6e 256 chips, v5p 6,144 (v5p-12288 counts
// TensorCores), v3 1,024 (v3-2048). A larger name is an error that says to run several slices.
TEST(TargetTest, SlicesStopAtTheLargestTheGenerationOffers) {
  EXPECT_EQ(FindSliceTarget("tpu-v5e-256")->chips, 256);
  EXPECT_EQ(FindSliceTarget("tpu-v5p-12288")->chips, 6144);
  EXPECT_EQ(FindSliceTarget("tpu-v3-2048")->chips, 1024);
  for (const char* name : {"tpu-v5e-512", "tpu-v6e-1024", "tpu-v5p-12296", "tpu-v3-8192"}) {
    auto t = FindSliceTarget(name);
    ASSERT_FALSE(t.ok()) << name;
    EXPECT_NE(t.error().message.find("at most"), std::string::npos) << t.error().message;
    EXPECT_NE(t.error().message.find("--slices"), std::string::npos) << t.error().message;
  }
  EXPECT_NE(FindSliceTarget("tpu-v5e-512").error().message.find("tpu-v5e-256"), std::string::npos);
  EXPECT_TRUE(FindSliceTarget("nvidia-h100-16384").ok());  // GPUs: no slice limit
}

TEST(TargetTest, UnknownTargetListsTheKnownOnes) {
  auto t = FindTarget("tpu-v9");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("tpu-v5e"), std::string::npos);
}

}  // namespace
}  // namespace tpudoctor

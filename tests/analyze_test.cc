// The library entry point: Analyze loads, checks and estimates in one call, and the facts it
// reports are the ones every later stage used.
#include "tpudoctor/analyze.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"
#include "tpudoctor/report/render.h"

namespace tpudoctor {
namespace {

Report AnalyzeOrDie(const std::string& rel, AnalyzeOptions options) {
  auto source = ReadSource(testing::Testdata(rel).string());
  EXPECT_TRUE(source.ok());
  auto report = Analyze(*source, options);
  EXPECT_TRUE(report.ok()) << (report.ok() ? "" : report.error().message);
  return report.ok() ? std::move(*report) : Report{};
}

// A model exported with a static batch of 64: --batch 8 cannot change its shapes, so check and
// estimate both use 64, and report the same memory.
TEST(AnalyzeTest, CheckAndEstimateAgreeOnBatchAndMemory) {
  AnalyzeOptions options;
  options.shapes.batch = 8;
  options.check.train = true;
  options.estimate_targets = {"tpu-v5e"};
  const Report r = AnalyzeOrDie("models/resnet50_b64_static.onnx", options);
  ASSERT_TRUE(r.facts.batch.has_value());
  EXPECT_EQ(*r.facts.batch, 64);
  EXPECT_EQ(r.facts.batch_source, BatchSource::kModel);
  EXPECT_EQ(r.estimate_batch, 64);
  ASSERT_TRUE(r.estimate.has_value());
  ASSERT_EQ(r.estimates.size(), 1u);
  EXPECT_DOUBLE_EQ(r.estimates[0].memory.total(), r.estimate->memory.total());
  EXPECT_DOUBLE_EQ(r.estimates[0].samples_per_s, r.estimate->samples_per_s);
  EXPECT_EQ(r.estimates[0].max_batch, r.estimate->max_batch);
}

TEST(AnalyzeTest, BatchFromTheFlagIsRecordedAsSuch) {
  AnalyzeOptions options;
  options.shapes.batch = 16;
  const Report r = AnalyzeOrDie("models/resnet50.onnx", options);
  ASSERT_TRUE(r.facts.batch.has_value());
  EXPECT_EQ(*r.facts.batch, 16);
  EXPECT_EQ(r.facts.batch_source, BatchSource::kFlag);
  EXPECT_EQ(r.facts.framework, Framework::kPyTorch);
  EXPECT_EQ(r.facts.format, "onnx");
  EXPECT_TRUE(r.estimates.empty());  // none asked for
}

TEST(AnalyzeTest, SymbolicBatchWithoutFlagCannotBeEstimated) {
  AnalyzeOptions options;
  options.estimate_targets = {"tpu-v5e"};
  const Report r = AnalyzeOrDie("models/resnet50.onnx", options);
  EXPECT_FALSE(r.facts.batch.has_value());
  EXPECT_TRUE(r.estimates.empty());
  EXPECT_EQ(r.estimate_unavailable, "estimate needs --batch N (the per-device batch)");
}

TEST(AnalyzeTest, XlaProgramsHaveNoBatchReadOffTheirInputs) {
  const Report r = AnalyzeOrDie("jax/flax_cnn_train_adam.hlo.txt", {});
  EXPECT_TRUE(r.facts.xla_program);
  EXPECT_FALSE(r.facts.batch.has_value());
  EXPECT_EQ(r.facts.framework, Framework::kJax);
}

TEST(AnalyzeTest, FrameworkComesFromTheFormat) {
  EXPECT_EQ(AnalyzeOrDie("keras/seed_float64_custom_varlen.h5", {}).facts.framework,
            Framework::kKeras);
  EXPECT_EQ(AnalyzeOrDie("pt2/mlp_static.pt2", {}).facts.framework, Framework::kPyTorch);
}

TEST(AnalyzeTest, SelectAndIgnoreFilterRules) {
  AnalyzeOptions options;
  options.check.ignore = {"TPU001"};
  Report r = AnalyzeOrDie("models/f64_mlp.onnx", options);
  for (const Diagnostic& d : r.findings) EXPECT_NE(d.code, "TPU001");
  options.check.ignore.clear();
  options.check.select = {"TPU"};
  r = AnalyzeOrDie("models/f64_mlp.onnx", options);
  ASSERT_FALSE(r.findings.empty());
  for (const Diagnostic& d : r.findings) EXPECT_TRUE(d.code.starts_with("TPU")) << d.code;
}

// The same finding at many nodes is one finding with a count and the first few places.
TEST(AnalyzeTest, RepeatedFindingsAreGrouped) {
  std::vector<Diagnostic> ds;
  for (int i = 0; i < 5; ++i) {
    Diagnostic d;
    d.code = "SHP001";
    d.severity = Severity::kError;
    d.message = "output shape of `NonZero` depends on data";
    d.location.node = "nz" + std::to_string(i);
    ds.push_back(d);
  }
  Diagnostic other = ds[0];
  other.message = "something else";
  ds.insert(ds.begin() + 2, other);
  GroupRepeatedFindings(ds);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].occurrences, 5);
  EXPECT_EQ(ds[0].location.node, "nz0");
  ASSERT_FALSE(ds[0].notes.empty());
  EXPECT_EQ(ds[0].notes.back(),
            "the same at 4 more places: node `nz1`, node `nz2`, node `nz3`, ...");
  EXPECT_EQ(ds[1].occurrences, 1);
  EXPECT_TRUE(ds[1].notes.empty());
  const Report r = AnalyzeOrDie("models/nonzero_mask.onnx", {});
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].occurrences, 2);
}

TEST(AnalyzeTest, BadInputIsAnErrorNotACrash) {
  Source s{"random.bin", std::string("\x01\x02garbage", 9)};
  auto r = Analyze(s, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("random.bin"), std::string::npos);
  AnalyzeOptions bad_target;
  bad_target.target = "tpu-v99";
  EXPECT_FALSE(Analyze(*BundledExample(), bad_target).ok());
}

TEST(AnalyzeTest, BundledExampleIsReady) {
  auto r = Analyze(*BundledExample(), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kReady);
}

}  // namespace
}  // namespace tpudoctor

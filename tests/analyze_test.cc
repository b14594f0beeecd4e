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

// `--target v6e-8`: the rules judge one chip, but a step that fits once its state is sharded over
// the slice's chips is a warning that says so, not a blocker; on one chip it stays an error.
TEST(AnalyzeTest, ASliceTargetJudgesMemorySharedOverItsChips) {
  auto source = ReadSource((testing::SourceDir() / "examples/configs/llama-2-7b.json").string());
  ASSERT_TRUE(source.ok());
  auto memory_finding = [&](const std::string& target) {
    AnalyzeOptions options;
    options.target = target;
    options.shapes.batch = 1;
    options.check.train = true;
    auto r = Analyze(*source, options);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    std::pair<Report, std::optional<Diagnostic>> out{r.ok() ? std::move(*r) : Report{}, {}};
    for (const Diagnostic& d : out.first.findings) {
      if (d.code == "MEM001") out.second = d;
    }
    return out;
  };
  const auto [slice, sharded] = memory_finding("v6e-8");
  EXPECT_EQ(slice.slice, "v6e-8");
  EXPECT_EQ(slice.target, "tpu-v6e");
  ASSERT_TRUE(sharded.has_value());
  EXPECT_EQ(sharded->severity, Severity::kWarning);
  EXPECT_NE(sharded->message.find("sharded over the slice's 8 chips (fsdp=8, remat layer)"),
            std::string::npos)
      << sharded->message;
  EXPECT_NE(slice.verdict, Verdict::kBlocked);
  const auto [chip, replicated] = memory_finding("tpu-v6e");
  EXPECT_TRUE(chip.slice.empty());
  ASSERT_TRUE(replicated.has_value());
  EXPECT_EQ(replicated->severity, Severity::kError);
  EXPECT_EQ(chip.verdict, Verdict::kBlocked);
  // A slice too small even sharded: still an error, with the sharded figure in a note.
  const auto [small, still] = memory_finding("v6e-2");
  ASSERT_TRUE(still.has_value());
  EXPECT_EQ(still->severity, Severity::kError);
  ASSERT_GE(still->notes.size(), 2u);
  EXPECT_NE(still->notes[1].find("sharded over the slice's 2 chips"), std::string::npos);
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

// A compiled program's parameters mix weights, optimizer state and data: the batch is the leading
// dim of the parameter that carries the data into the matmuls, convolutions or embeddings, the
// same in both text forms of a program; an optimized dump (swapped operands, relayouts) is not
// read.
TEST(AnalyzeTest, XlaProgramsReadTheirBatchOffTheDataParameter) {
  const std::vector<std::pair<std::string, std::int64_t>> programs = {
      {"flax_cnn_train_adam", 32},   // x f32[32,32,32,3] after 26 weight and Adam-state parameters
      {"flax_mlp_train_adam", 128},  // x f32[128,512], labels s32[128]
      {"flax_mlp_infer", 128},
      {"flax_transformer_block_infer", 8}};
  for (const auto& [name, batch] : programs) {
    for (const char* ext : {".hlo.txt", ".stablehlo.mlir"}) {
      const Report r = AnalyzeOrDie("jax/" + name + ext, {});
      EXPECT_TRUE(r.facts.xla_program);
      EXPECT_EQ(r.facts.framework, Framework::kJax);
      ASSERT_TRUE(r.facts.batch.has_value()) << name << ext;
      EXPECT_EQ(*r.facts.batch, batch) << name << ext;
      EXPECT_EQ(r.facts.batch_source, BatchSource::kModel);
    }
  }
  // A tied embedding table multiplied as a dot's left operand is a weight: the batch is the token
  // ids' (it was read as 50,257, the vocabulary).
  const Report tied = AnalyzeOrDie("xla_forms/tied_embedding_lm.hlo.txt", {});
  ASSERT_TRUE(tied.facts.batch.has_value());
  EXPECT_EQ(*tied.facts.batch, 8);
  // No matmul, convolution or gather: nothing says what a sample is.
  EXPECT_FALSE(AnalyzeOrDie("jax/int64_ops.hlo.txt", {}).facts.batch.has_value());
  EXPECT_FALSE(AnalyzeOrDie("jax/flax_cnn_train_adam.opt_hlo.txt", {}).facts.batch.has_value());
}

// The same program as HLO text and as StableHLO: the same verdict and batch, the same memory (the
// fusion plan and the memory-aware schedule do not depend on the text's order), about the same
// kernels and time, on a TPU and a GPU. (Memory differed by up to 12% with text-order liveness.)
TEST(AnalyzeTest, HloAndStableHloOfOneProgramAgree) {
  for (const auto& entry : std::filesystem::directory_iterator(testing::Testdata("jax"))) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(".hlo.txt") || file.ends_with(".opt_hlo.txt")) continue;
    const std::string name = file.substr(0, file.size() - std::string(".hlo.txt").size());
    SCOPED_TRACE(name);
    AnalyzeOptions options;
    options.estimate_targets = {"tpu-v5e", "nvidia-h100"};
    const Report hlo = AnalyzeOrDie("jax/" + name + ".hlo.txt", options);
    const Report mlir = AnalyzeOrDie("jax/" + name + ".stablehlo.mlir", options);
    EXPECT_EQ(hlo.verdict, mlir.verdict);
    EXPECT_EQ(hlo.errors, mlir.errors);
    EXPECT_EQ(hlo.facts.batch, mlir.facts.batch);
    ASSERT_EQ(hlo.estimates.size(), mlir.estimates.size());
    for (std::size_t i = 0; i < hlo.estimates.size(); ++i) {
      // Within a scalar or two: StableHLO spells a few scalar computations as ops of their own.
      EXPECT_NEAR(hlo.estimates[i].memory.total(), mlir.estimates[i].memory.total(),
                  1e-4 * hlo.estimates[i].memory.total());
      EXPECT_NEAR(hlo.estimates[i].kernels, mlir.estimates[i].kernels, 2);
      EXPECT_NEAR(hlo.estimates[i].step_ms, mlir.estimates[i].step_ms,
                  0.1 * hlo.estimates[i].step_ms);
    }
  }
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

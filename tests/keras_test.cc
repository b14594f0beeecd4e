// Keras models: Keras 3 `.keras` archives and tf-keras `to_json()` configs (a real one from
// KotlinDL, hand-written ones in Keras's exact formats: scripts/gen_keras_fixtures.py). Shapes
// from configs, dtype policies, custom and non-compilable layers named as the user wrote them,
// FLOPs of the canonical ops, and hostile files.
#include "tpudoctor/frontend/keras.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/test_util.h"
#include "tpudoctor/check/check.h"
#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/ir/verify.h"
#include "tpudoctor/knowledge/keras_layers.h"
#include "tpudoctor/report/report.h"

namespace tpudoctor {
namespace {

using testing::Testdata;

ShapeOptions Batch(std::int64_t n) {
  ShapeOptions o;
  o.batch = n;
  return o;
}

Report CheckFile(const std::string& rel, const ShapeOptions& options = Batch(32)) {
  LoadedModel m = testing::LoadOrDie(Testdata(rel), options);
  EXPECT_TRUE(VerifyGraph(m.graph).empty()) << rel;
  const TargetSpec& t = **FindTarget(kDefaultTarget);
  return BuildReport(rel, m, t, RunChecks(m.graph, t));
}

std::vector<const Diagnostic*> Findings(const Report& r, const std::string& code) {
  std::vector<const Diagnostic*> out;
  for (const Diagnostic& d : r.findings) {
    if (d.code == code) out.push_back(&d);
  }
  return out;
}

std::string TypeOf(const LoadedModel& m, const std::string& value) {
  auto id = m.graph.FindValue(value);
  return id ? m.graph.value(*id).type.ToString() : "(missing)";
}

double FlopsOf(const LoadedModel& m, const std::string& node) {
  const auto costs = ComputeOpCosts(m.graph);
  for (const Node& n : m.graph.nodes()) {
    if (n.name == node) return costs[static_cast<std::size_t>(n.id)].flops;
  }
  return -1;
}

TEST(KerasTest, RealKotlinDlLstmConfig) {
  Report r = CheckFile("keras/kotlindl_lstm_model.json");
  EXPECT_EQ(r.verdict, Verdict::kReady);
  LoadedModel m = testing::LoadOrDie(Testdata("keras/kotlindl_lstm_model.json"), Batch(8));
  EXPECT_EQ(m.producer, "keras 2.4.0");
  EXPECT_EQ(TypeOf(m, "lstm_3"), "f32[8,40,64]");  // return_sequences
  EXPECT_EQ(TypeOf(m, "lstm_5"), "f32[8,64]");     // last step only
  EXPECT_EQ(TypeOf(m, "activation_1"), "f32[8,41]");
  // LSTM: 4 gates x (input + recurrent) per step: 2 * 40 steps * 8 * 256 * (41 + 64).
  EXPECT_DOUBLE_EQ(FlopsOf(m, "lstm_3"), 2.0 * 40 * 8 * 256 * (41 + 64));
}

// Built-in layer classes depend on the Keras version that wrote the file: `RMSNormalization` is
// Keras 3's, so in a Keras 2.4 file it is the user's own code (TPU003), and in a Keras 3 file not.
TEST(KerasTest, BuiltinsFollowTheFilesKerasVersion) {
  const std::string k2 =
      testing::ReadFile(testing::Testdata("keras/keras2_custom_named_like_keras3_builtin.json"));
  auto warned = [](const std::string& text) {
    auto model = LoadKeras(Source{"m.json", text}, {});
    EXPECT_TRUE(model.ok());
    for (const Diagnostic& d : RunChecks(model->graph, **FindTarget("tpu-v5e"))) {
      if (d.code == "TPU003" && d.location.node == "my_rms_norm") return true;
    }
    return false;
  };
  EXPECT_TRUE(warned(k2));
  std::string k3 = k2;
  const std::size_t at = k3.find("\"2.4.0\"");
  ASSERT_NE(at, std::string::npos);
  k3.replace(at, 7, "\"3.6.0\"");
  EXPECT_FALSE(warned(k3));
  EXPECT_TRUE(KerasVersionDefines("RMSNormalization", "3.6.0"));
  EXPECT_FALSE(KerasVersionDefines("RMSNormalization", "2.15.0"));
  EXPECT_TRUE(KerasVersionDefines("TFOpLambda", "2.15.0"));
  EXPECT_FALSE(KerasVersionDefines("TFOpLambda", "3.1.0"));
  EXPECT_TRUE(KerasVersionDefines("Dense", ""));
}

TEST(KerasTest, SeedsFloat64DenseAndCustomLayer) {
  // float64 runs on TPU as float32 pairs (TPU002, the Keras path applied); the custom layer is
  // code the file does not hold (TPU003).
  Report r = CheckFile("keras/seed_float64_custom.keras");
  EXPECT_EQ(r.verdict, Verdict::kRunsWithWarnings);
  EXPECT_TRUE(Findings(r, "TPU001").empty());
  ASSERT_EQ(Findings(r, "TPU002").size(), 1u);
  const Diagnostic& f64 = *Findings(r, "TPU002")[0];
  EXPECT_NE(f64.message.find("`dense_f64/kernel`"), std::string::npos);
  EXPECT_TRUE(std::ranges::any_of(
      f64.notes, [](const std::string& n) { return n.starts_with("behaviour applied: Keras"); }));
  // ... in Keras terms: the layer's dtype policy, and a Keras fix.
  EXPECT_NE(f64.notes[0].find("dtype policy"), std::string::npos) << f64.notes[0];
  ASSERT_TRUE(f64.fix.has_value());
  EXPECT_NE(f64.fix->description.find("mixed_bfloat16"), std::string::npos);
  // The custom layer: a warning naming it, not a blocker.
  auto custom = Findings(r, "TPU003");
  ASSERT_EQ(custom.size(), 1u);
  EXPECT_EQ(custom[0]->severity, Severity::kWarning);
  EXPECT_EQ(custom[0]->location.node, "custom_layer");
  EXPECT_EQ(custom[0]->location.op, "CustomLayer");
  // The next layer's build_config carries the shapes on past it.
  LoadedModel m = testing::LoadOrDie(Testdata("keras/seed_float64_custom.keras"), Batch(32));
  EXPECT_EQ(TypeOf(m, "head"), "f32[32,10]");
  EXPECT_EQ(TypeOf(m, "dense_f64"), "f64[32,256]");
}

TEST(KerasTest, MixedBfloat16CnnShapesAndFlops) {
  LoadedModel m = testing::LoadOrDie(Testdata("keras/cnn_mixed_bf16.keras"), Batch(32));
  EXPECT_EQ(m.producer, "keras 3.6.0");
  EXPECT_EQ(TypeOf(m, "stem"), "bf16[32,112,112,128]");   // stride 2, same padding
  EXPECT_EQ(TypeOf(m, "stem/kernel"), "f32[3,3,3,128]");  // variables stay float32
  EXPECT_EQ(TypeOf(m, "pool"), "bf16[32,56,56,128]");
  EXPECT_EQ(TypeOf(m, "gap"), "bf16[32,128]");
  EXPECT_EQ(TypeOf(m, "logits"), "bf16[32,1024]");
  EXPECT_DOUBLE_EQ(FlopsOf(m, "stem"), 2.0 * 32 * 112 * 112 * 128 * 3 * 3 * 3);
  EXPECT_DOUBLE_EQ(FlopsOf(m, "dw"), 2.0 * 32 * 112 * 112 * 128 * 3 * 3);   // one channel each
  EXPECT_DOUBLE_EQ(FlopsOf(m, "sep/1"), 2.0 * 32 * 112 * 112 * 128 * 128);  // the 1x1 stage
  EXPECT_DOUBLE_EQ(FlopsOf(m, "logits"), 2.0 * 32 * 128 * 1024);
  // Ready: the RGB input and its rescaling are laid out by XLA for the first convolution, so
  // their lane padding as written is no finding (docs/rules/PERF001.md), and the 128-channel
  // activations pad nothing.
  Report r = CheckFile("keras/cnn_mixed_bf16.keras");
  EXPECT_EQ(r.verdict, Verdict::kReady);
  for (const Diagnostic& d : r.findings) EXPECT_LT(d.severity, Severity::kWarning) << d.message;
  // A bare config.json reads the same as the archive.
  LoadedModel bare = testing::LoadOrDie(Testdata("keras/cnn_mixed_bf16_config.json"), Batch(32));
  EXPECT_EQ(PrintGraphText(bare.graph), PrintGraphText(m.graph));
}

TEST(KerasTest, MixedFloat16PolicyAndSharedNestedModel) {
  Report r = CheckFile("keras/mlp_mixed_float16_keras2.json");
  EXPECT_EQ(r.verdict, Verdict::kRunsWithWarnings);
  EXPECT_FALSE(Findings(r, "TPU002").empty());  // float16 compute: bfloat16 is native
  LoadedModel m = testing::LoadOrDie(Testdata("keras/mlp_mixed_float16_keras2.json"), Batch(32));
  EXPECT_EQ(TypeOf(m, "block/block_dense"), "f16[32,512]");
  EXPECT_EQ(TypeOf(m, "block/block_dense/kernel"), "f32[512,512]");
  EXPECT_EQ(TypeOf(m, "head"), "f16[32,1000]");
}

TEST(KerasTest, TextPipelineLayersInTheModel) {
  Report r = CheckFile("keras/text_model_keras2.json");
  EXPECT_EQ(r.verdict, Verdict::kBlocked);
  std::map<std::string, Severity> tpu003;
  for (const Diagnostic* d : Findings(r, "TPU003")) tpu003[d->location.op] = d->severity;
  EXPECT_EQ(tpu003["TextVectorization"], Severity::kError);  // lookup tables: no XLA
  EXPECT_EQ(tpu003["Lambda"], Severity::kWarning);           // code not in the file
  EXPECT_FALSE(Findings(r, "TPU001").empty());               // the string input
  LoadedModel m = testing::LoadOrDie(Testdata("keras/text_model_keras2.json"), Batch(32));
  EXPECT_EQ(TypeOf(m, "vectorize"), "s64[32,128]");
  EXPECT_EQ(TypeOf(m, "embed"), "f32[32,128,128]");
  EXPECT_EQ(TypeOf(m, "bilstm"), "f32[32,128,128]");  // 2 x 64, concatenated
  EXPECT_EQ(TypeOf(m, "mha/6"), "f32[32,128,128]");   // back to the query's width
  // Scores: batch 32 x 4 heads, 128 x 128 x key_dim 32.
  EXPECT_DOUBLE_EQ(FlopsOf(m, "mha/3"), 2.0 * 32 * 4 * 128 * 128 * 32);
}

TEST(KerasTest, LegacyHdf5ModelsReadTheirConfig) {
  // Fixed-length bytes (Keras 2's `model.save("m.h5")`) and a variable-length string attribute.
  LoadedModel h5 = testing::LoadOrDie(Testdata("keras/mlp_mixed_float16_keras2.h5"), Batch(32));
  LoadedModel json = testing::LoadOrDie(Testdata("keras/mlp_mixed_float16_keras2.json"), Batch(32));
  EXPECT_EQ(h5.format, "keras-h5");
  EXPECT_EQ(h5.producer, "keras 2.13.1");
  EXPECT_EQ(PrintGraphText(h5.graph), PrintGraphText(json.graph));
  Report r = CheckFile("keras/seed_float64_custom_varlen.h5");
  EXPECT_EQ(r.verdict, Verdict::kRunsWithWarnings);
  EXPECT_FALSE(Findings(r, "TPU002").empty());
  EXPECT_FALSE(Findings(r, "TPU003").empty());
}

// Mutated .h5 files on which libhdf5 overflows a heap buffer or asks for 2^54 bytes (found by the
// fuzzer): the reader's child process contains it; the answer is one line either way (which line
// depends on how far libhdf5 got before it failed).
TEST(KerasTest, LibHdf5FailuresStayInTheChild) {
  for (const char* file : {"keras/bad_hdf5_overflow.h5", "keras/bad_hdf5_alloc.h5"}) {
    auto src = ReadSource(Testdata(file).string());
    ASSERT_TRUE(src.ok()) << file;
    auto m = LoadModel(*src, {});
    ASSERT_FALSE(m.ok()) << file;
    EXPECT_NE(m.error().message.find("HDF5"), std::string::npos) << m.error().message;
    EXPECT_EQ(m.error().message.find('\n'), std::string::npos) << file;
  }
}

TEST(KerasTest, HostileAndBrokenFilesGiveOneLine) {
  const std::map<std::string, std::string> expected = {
      {"bad_dotdot.keras", "unsafe name"},
      {"bad_bomb.keras", "zip bomb"},
      {"bad_dangling.keras", "`stem_bn` is called on tensors no layer produces"},
      {"bad_deep.json", "nested more than"},
      {"bad_truncated.json", "invalid JSON at byte"},
      {"bad_huge_dims.json", "overflows 64 bits"},
      {"bad_weights_only.h5", "without a `model_config` attribute"},
      {"bad_truncated.h5", "damaged or truncated HDF5"},
      // Found by the keras fuzzer: libhdf5 loops forever on it; the reader's child process is
      // stopped by its CPU limit (10 s).
      {"bad_hdf5_spins.h5", "libhdf5 could not read this HDF5 file"},
  };
  for (const auto& [file, words] : expected) {
    auto src = ReadSource(Testdata("keras/" + file).string());
    ASSERT_TRUE(src.ok()) << file;
    auto m = LoadModel(*src, Batch(32));
    ASSERT_FALSE(m.ok()) << file;
    EXPECT_NE(m.error().message.find(words), std::string::npos) << m.error().message;
    EXPECT_EQ(m.error().message.find('\n'), std::string::npos) << file;
  }
}

}  // namespace
}  // namespace tpudoctor

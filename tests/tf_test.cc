// TensorFlow files: real SavedModels, GraphDefs, MetaGraphDefs and tf.data graphs
// (testdata/tf, provenance in its manifest), and hand-written pipelines for the PIPE rules
// (scripts/gen_pipe_fixtures.py). Verdicts, names as TensorFlow wrote them, shapes and FLOPs,
// and hostile protobufs.
#include "tpudoctor/frontend/tf.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/test_util.h"
#include "tpudoctor/check/check.h"
#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/ir/verify.h"
#include "tpudoctor/report/report.h"

namespace tpudoctor {
namespace {

using testing::Testdata;

ShapeOptions Batch(std::int64_t n) {
  ShapeOptions o;
  o.batch = n;
  return o;
}

Report CheckFile(const std::string& rel, const ShapeOptions& options = Batch(8)) {
  LoadedModel m = testing::LoadOrDie(Testdata(rel), options);
  EXPECT_TRUE(VerifyGraph(m.graph).empty()) << rel;
  const TargetSpec& t = **FindTarget(kDefaultTarget);
  return BuildReport(rel, m, t, RunChecks(m.graph, t));
}

std::set<std::string> Codes(const Report& r, Severity at_least) {
  std::set<std::string> out;
  for (const Diagnostic& d : r.findings) {
    if (d.severity >= at_least) out.insert(d.code);
  }
  return out;
}

const Diagnostic* Find(const Report& r, const std::string& code) {
  for (const Diagnostic& d : r.findings) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

TEST(TfTest, RealFilesGetTheRightVerdicts) {
  // Keras-built SavedModels, TF1 and TF2 serving models, frozen graphs: plain dense/conv math.
  for (const char* ready :
       {"tf/rust_keras_single_input", "tf/rust_keras_multiple_inputs", "tf/serving_counter",
        "tf/serving_half_plus_two_cpu", "tf/serving_matrix_half_plus_two",
        "tf/tfnet_keras_functional_printv2", "tf/tfnet_keras_lstm_from_sequential",
        "tf/tfnet_tf2_conv_inference", "tf/graphdef/tfjs_converter_tf1_while_loop.pb",
        "tf/metagraph/tfnet_cond_test.meta"}) {
    EXPECT_EQ(CheckFile(ready).verdict, Verdict::kReady) << ready;
  }
  // MobileNet runs; its one warning is the RGB input's lane padding (docs/rules/PERF001.md).
  Report mobilenet = CheckFile("tf/graphdef/tfjs_converter_mobilenet_v1_optimized_model.pb");
  EXPECT_EQ(Codes(mobilenet, Severity::kWarning), std::set<std::string>{"PERF001"});
  // Faster R-CNN: NonMaxSuppression's box count and anchors computed from image-size values.
  Report rcnn = CheckFile("tf/graphdef/lily_tf_faster_rcnn_vgg16_graph.pb");
  EXPECT_EQ(rcnn.verdict, Verdict::kBlocked);
  bool nms = false;
  for (const Diagnostic& d : rcnn.findings)
    nms |= d.code == "SHP001" && d.location.op == "NonMaxSuppression";
  EXPECT_TRUE(nms);
  EXPECT_TRUE(Codes(rcnn, Severity::kWarning).count("TPU003"));  // CropAndResize on the host
}

TEST(TfTest, HostOpsWarnAndStringsThatStayOnTheHostAreFine) {
  // A serialized tf.Example parsed on the host before the model: runs, with a warning.
  Report parse = CheckFile("tf/metagraph/serving_session_bundle_half_plus_two_export.meta");
  EXPECT_EQ(parse.verdict, Verdict::kRunsWithWarnings);
  EXPECT_FALSE(Codes(parse, Severity::kError).count("TPU001"));
  const Diagnostic* host = Find(parse, "TPU003");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->location.op, "ParseExample");
  // TF1 training with reference variables: ApplyAdam has no XLA kernel.
  Report adam = CheckFile("tf/metagraph/tfnet_char_cnn_untrained.meta");
  const Diagnostic* apply = Find(adam, "TPU003");
  ASSERT_NE(apply, nullptr);
  EXPECT_NE(apply->message.find("resource variables"), std::string::npos);
}

TEST(TfTest, FunctionsInlineUnderTheirKerasScope) {
  LoadedModel m = testing::LoadOrDie(Testdata("tf/rust_keras_single_input"), Batch(8));
  EXPECT_EQ(m.format, "tf-savedmodel");
  EXPECT_EQ(m.producer, "tensorflow 2.3.0");
  auto mm = m.graph.FindValue("sequential/test_in/MatMul");
  ASSERT_TRUE(mm.has_value());
  EXPECT_EQ(m.graph.value(*mm).type.ToString(), "f32[8,5]");
  const Node& node = m.graph.node(m.graph.value(*mm).producer);
  EXPECT_EQ(node.framework_op, "MatMul");
  EXPECT_EQ(node.loc.scope, "sequential/test_in");
  EXPECT_DOUBLE_EQ(ComputeOpCosts(m.graph)[static_cast<std::size_t>(node.id)].flops,
                   2.0 * 8 * 5 * 5);
  // Variables are weights, named by their variables.
  auto kernel = m.graph.FindValue("test_in/kernel");
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(m.graph.value(*kernel).origin, ValueOrigin::kInitializer);
  // Keras metadata beside the SavedModel names the Keras version.
  LoadedModel k = testing::LoadOrDie(Testdata("tf/tfnet_keras_functional_printv2"));
  EXPECT_EQ(k.producer, "tensorflow 2.11.0, keras 2.11.0");
}

TEST(TfTest, ConvolutionsAreLaidOutByDataFormat) {
  LoadedModel m = testing::LoadOrDie(
      Testdata("tf/graphdef/tfjs_converter_mobilenet_v1_optimized_model.pb"), Batch(8));
  double conv = 0, depthwise = 0;
  const auto costs = ComputeOpCosts(m.graph);
  for (const Node& n : m.graph.nodes()) {
    if (n.framework_op == "Conv2D") conv += costs[static_cast<std::size_t>(n.id)].flops;
    if (n.framework_op == "DepthwiseConv2dNative")
      depthwise += costs[static_cast<std::size_t>(n.id)].flops;
  }
  // MobileNet v1 (224, alpha 1.0) is ~569 M multiply-adds per image, ~97% of them in the 1x1
  // convolutions: 8 images ≈ 9.1 GFLOP in all.
  EXPECT_NEAR((conv + depthwise) / (8 * 2 * 569e6), 1.0, 0.05);
  EXPECT_LT(depthwise, 0.1 * conv);
}

TEST(TfTest, TfDataPipelinesGetThePipeRules) {
  Report seed = CheckFile("tfdata/seed_pipeline.pbtxt", {});
  EXPECT_EQ(seed.verdict, Verdict::kBlocked);
  EXPECT_EQ(Codes(seed, Severity::kNote), (std::set<std::string>{"PIPE001", "PIPE002", "PIPE003",
                                                                 "PIPE004", "PIPE005", "PIPE006"}));
  EXPECT_EQ(CheckFile("tfdata/good_pipeline.pbtxt", {}).verdict, Verdict::kReady);
  // Real dataset graphs from the TensorFlow repository.
  Report real = CheckFile("tf/tfdata/mlir_tf_data_pipeline.pbtxt", {});
  EXPECT_EQ(Codes(real, Severity::kNote), (std::set<std::string>{"PIPE002", "PIPE003", "PIPE004"}));
  EXPECT_TRUE(Codes(CheckFile("tf/tfdata/tfdata_service_interleave_textline_dataset.pbtxt", {}),
                    Severity::kWarning)
                  .count("PIPE005"));
}

// XLA needs some inputs as compile-time constants (Reshape's shape, Fill's dims): fed from a
// placeholder's values they make the output shape data-dependent.
TEST(TfTest, CompileTimeConstantInputs) {
  const std::string header =
      "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
      " attr { key: \"shape\" value { shape { dim { size: 4 } dim { size: 6 } } } } }\n"
      "node { name: \"n\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } }"
      " attr { key: \"shape\" value { shape { dim { size: 2 } } } } }\n";
  auto roots = [&](const std::string& body) {
    auto m = LoadTensorFlow(Source{"g.pbtxt", header + body}, {});
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
    std::set<std::string> ops;
    if (!m.ok()) return ops;
    for (const Diagnostic& d : RunChecks(m->graph, **FindTarget(kDefaultTarget))) {
      if (d.code == "SHP001") ops.insert(d.location.op);
    }
    return ops;
  };
  EXPECT_EQ(roots("node { name: \"r\" op: \"Reshape\" input: \"x\" input: \"n\""
                  " attr { key: \"T\" value { type: DT_FLOAT } } }"),
            std::set<std::string>{"Reshape"});
  EXPECT_EQ(roots("node { name: \"f\" op: \"Fill\" input: \"n\" input: \"x\""
                  " attr { key: \"T\" value { type: DT_FLOAT } } }"),
            std::set<std::string>{"Fill"});
  EXPECT_TRUE(
      roots(
          "node { name: \"c\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } }"
          " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }"
          " int_val: 6 int_val: 4 } } } }\n"
          "node { name: \"r\" op: \"Reshape\" input: \"x\" input: \"c\""
          " attr { key: \"T\" value { type: DT_FLOAT } } }")
          .empty());
}

TEST(TfTest, BadProtobufsGiveOneLine) {
  auto load = [](const std::string& name, const std::string& bytes) {
    return LoadTensorFlow(Source{name, bytes}, {});
  };
  const std::string pb = testing::ReadFile(Testdata("tf/graphdef/rust_regression_model.pb"));
  auto truncated = load("m.pb", pb.substr(0, pb.size() / 2));
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().message.find('\n'), std::string::npos);
  // Binary: an AttrValue nested 300 deep (func → attr → value → func ...): protobuf's recursion
  // limit, not a stack overflow.
  auto field = [](int number, const std::string& payload) {
    std::string out(1, static_cast<char>((number << 3) | 2));
    std::size_t n = payload.size();
    do {
      out += static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
      n >>= 7;
    } while (n > 0);
    return out + payload;
  };
  std::string value;  // an empty AttrValue
  for (int i = 0; i < 300; ++i) {
    const std::string entry = field(1, "k") + field(2, value);  // AttrEntry{key, value}
    value = field(10, field(2, entry));                         // AttrValue{func{attr}}
  }
  const std::string node =
      field(1, "a") + field(2, "Const") + field(5, field(1, "x") + field(2, value));
  auto deep_binary = load("deep.pb", field(1, node));
  ASSERT_FALSE(deep_binary.ok());
  EXPECT_EQ(deep_binary.error().message.find('\n'), std::string::npos);
  std::string nested = "node { name: \"a\" op: \"Const\" attr { key: \"x\" value { ";
  for (int i = 0; i < 5000; ++i) nested += "func { attr { key: \"k\" value { ";
  auto text = load("deep.pbtxt", nested);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("deep.pbtxt:"), std::string::npos) << text.error().message;
  auto garbage = load("x.pbtxt", "node { name: \"a\" op: \"Add\" input: \"b\" }");
  ASSERT_FALSE(garbage.ok());  // dangling input
  EXPECT_NE(garbage.error().message.find("`b`"), std::string::npos) << garbage.error().message;
  auto cycle = load("c.pbtxt",
                    "node { name: \"a\" op: \"Add\" input: \"b\" input: \"b\" }\n"
                    "node { name: \"b\" op: \"Neg\" input: \"a\" }");
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.error().message.find("cycle"), std::string::npos);
}

}  // namespace
}  // namespace tpudoctor

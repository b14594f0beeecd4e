// SplitOnnxFile must read a file as a parse of the whole ModelProto would.
#include "src/frontends/onnx/onnx_file.h"

#include <gtest/gtest.h>

#include <string>

namespace tpudoctor::onnx_frontend {
namespace {

onnx::ModelProto SmallModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("test");
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("main");
  g.add_input()->set_name("x");
  g.add_output()->set_name("z");
  onnx::TensorProto& w = *g.add_initializer();
  w.set_name("w");
  w.add_dims(4);
  onnx::NodeProto& relu = *g.add_node();
  relu.set_op_type("Relu");
  relu.add_input("x");
  relu.add_output("y");
  onnx::NodeProto& constant = *g.add_node();
  constant.set_op_type("Constant");
  constant.add_output("k");
  constant.add_output("");
  onnx::AttributeProto& value = *constant.add_attribute();
  value.set_name("value");
  value.mutable_t()->add_dims(1);
  return m;
}

TEST(OnnxFile, SplitsNodesAndInitializersFromTheRest) {
  const onnx::ModelProto m = SmallModel();
  const std::string bytes = m.SerializeAsString();
  auto file = SplitOnnxFile(bytes);
  ASSERT_TRUE(file);
  EXPECT_TRUE(file->has_graph);
  EXPECT_EQ(file->model.producer_name(), "test");
  EXPECT_EQ(file->model.graph().name(), "main");
  EXPECT_EQ(file->model.graph().node_size(), 0);
  EXPECT_EQ(file->model.graph().initializer_size(), 0);
  ASSERT_EQ(file->initializers.size(), 1u);
  ASSERT_EQ(file->nodes.size(), 2u);
  EXPECT_EQ(file->outputs, (std::vector<std::string_view>{"y", "k", ""}));
  EXPECT_EQ(file->nodes[0].outputs, 1u);
  EXPECT_FALSE(file->nodes[0].has_tensor_or_graph);
  EXPECT_EQ(file->nodes[1].first_output, 1u);
  EXPECT_EQ(file->nodes[1].outputs, 2u);
  EXPECT_TRUE(file->nodes[1].has_tensor_or_graph);

  onnx::NodeProto node;
  ASSERT_TRUE(ParseTopLevel(file->nodes[1].bytes, node));
  EXPECT_EQ(node.SerializeAsString(), m.graph().node(1).SerializeAsString());
  onnx::TensorProto tensor;
  ASSERT_TRUE(ParseTopLevel(file->initializers[0], tensor));
  EXPECT_EQ(tensor.name(), "w");
}

TEST(OnnxFile, RepeatedGraphFieldsMerge) {
  onnx::ModelProto second;
  second.mutable_graph()->set_name("renamed");
  second.mutable_graph()->add_node()->add_output("z");
  const std::string bytes = SmallModel().SerializeAsString() + second.SerializeAsString();
  onnx::ModelProto whole;
  ASSERT_TRUE(whole.ParseFromString(bytes));
  auto file = SplitOnnxFile(bytes);
  ASSERT_TRUE(file);
  EXPECT_EQ(file->model.graph().name(), whole.graph().name());
  EXPECT_EQ(file->nodes.size(), static_cast<std::size_t>(whole.graph().node_size()));
  EXPECT_EQ(file->outputs.back(), "z");
}

TEST(OnnxFile, RejectsWhatAWholeParseRejects) {
  const std::string bytes = SmallModel().SerializeAsString();
  for (std::size_t cut = 1; cut < bytes.size(); ++cut) {
    const std::string truncated = bytes.substr(0, cut);
    onnx::ModelProto whole;
    if (whole.ParseFromString(truncated)) continue;
    auto file = SplitOnnxFile(truncated);
    if (!file) continue;
    // The split leaves a node's inner fields to ParseTopLevel: one of the parts must fail.
    bool all_parse = true;
    onnx::NodeProto node;
    onnx::TensorProto tensor;
    for (const EncodedNode& n : file->nodes) all_parse = all_parse && ParseTopLevel(n.bytes, node);
    for (std::string_view t : file->initializers) all_parse = all_parse && ParseTopLevel(t, tensor);
    EXPECT_FALSE(all_parse) << "cut at " << cut;
  }
  EXPECT_FALSE(SplitOnnxFile(std::string("\x08\x01\x00", 3)));  // a tag of 0
}

TEST(OnnxFile, AFieldOfTheWrongWireTypeIsUnknownNotANode) {
  // GraphProto field 1 (node) as a varint: a whole parse keeps it as an unknown field.
  std::string graph = std::string("\x08\x05", 2);
  std::string bytes = std::string("\x08\x08", 2) + "\x3a" + static_cast<char>(graph.size()) + graph;
  onnx::ModelProto whole;
  ASSERT_TRUE(whole.ParseFromString(bytes));
  auto file = SplitOnnxFile(bytes);
  ASSERT_TRUE(file);
  EXPECT_TRUE(file->nodes.empty());
  EXPECT_EQ(whole.graph().node_size(), 0);
}

}  // namespace
}  // namespace tpudoctor::onnx_frontend

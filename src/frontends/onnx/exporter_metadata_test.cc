// torch.onnx's dynamo exporter records each node's module path and Python frame in
// NodeProto.metadata_props (field 9 of ONNX 1.16), which Debian's libonnx keeps as unknown bytes.
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {
namespace {

void AddMetadata(onnx::NodeProto& node, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto entry;
  entry.set_key(key);
  entry.set_value(value);
  node.GetReflection()->MutableUnknownFields(&node)->AddLengthDelimited(9,
                                                                        entry.SerializeAsString());
}

// x[2,4] @ w[4,8] -> y, one Relu after it; the MatMul carries the exporter's metadata.
std::string Model(const std::string& scopes, const std::string& trace) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  m.add_opset_import()->set_version(18);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("main");
  auto value = [](onnx::ValueInfoProto* v, const char* name, std::vector<int> dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  value(g.add_input(), "x", {2, 4});
  value(g.add_input(), "w", {4, 8});
  value(g.add_output(), "r", {2, 8});
  onnx::NodeProto& mm = *g.add_node();
  mm.set_name("node_linear");
  mm.set_op_type("MatMul");
  mm.add_input("x");
  mm.add_input("w");
  mm.add_output("y");
  AddMetadata(mm, "namespace", ": Model/encoder.layers.3.fc1: aten.linear.default");
  if (!scopes.empty()) AddMetadata(mm, "pkg.torch.onnx.name_scopes", scopes);
  if (!trace.empty()) AddMetadata(mm, "pkg.torch.onnx.stack_trace", trace);
  onnx::NodeProto& relu = *g.add_node();
  relu.set_name("/encoder/relu/Relu");
  relu.set_op_type("Relu");
  relu.add_input("y");
  relu.add_output("r");
  return m.SerializeAsString();
}

const Node& Named(const Graph& g, std::string_view name) {
  for (const Node& n : g.nodes()) {
    if (n.name == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return g.nodes().front();
}

TEST(OnnxExporterMetadata, ModulePathAndModelLineOfEachNode) {
  const std::string trace =
      "File \"<eval_with_key>.7\", line 12, in forward\n    linear = ...\n"
      "File \"/home/me/model.py\", line 42, in forward\n    return self.fc1(x)\n"
      "File \"/usr/lib/python3/dist-packages/torch/nn/modules/linear.py\", line 125, in forward\n";
  auto m = LoadModel(Source{"m.onnx", Model("['', 'encoder', 'encoder.layers.3', "
                                            "'encoder.layers.3.fc1', 'linear']",
                                            trace)},
                     {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const Node& mm = Named(m->graph, "node_linear");
  EXPECT_EQ(mm.loc.scope, "/encoder/layers.3/fc1");  // the form TorchScript exports write
  EXPECT_EQ(mm.loc.file, "/home/me/model.py");       // the model's own frame, not torch's
  EXPECT_EQ(mm.loc.line, 42);
  // A scope in the node's name (TorchScript exports) is kept; no metadata, no location.
  const Node& relu = Named(m->graph, "/encoder/relu/Relu");
  EXPECT_EQ(relu.loc.scope, "/encoder/relu");
  EXPECT_TRUE(relu.loc.file.empty());
}

TEST(OnnxExporterMetadata, MalformedMetadataIsIgnored) {
  for (const auto& [scopes, trace] : std::vector<std::pair<std::string, std::string>>{
           {"['unterminated", "File \"x.py\", line"},
           {"[]", "File \"<eval_with_key>.1\", line 3, in forward"},
           {"['only_the_op']", "File \"x.py\", line 99999999999999999999"}}) {
    auto m = LoadModel(Source{"m.onnx", Model(scopes, trace)}, {});
    ASSERT_TRUE(m.ok()) << m.error().message;
    const Node& mm = Named(m->graph, "node_linear");
    EXPECT_EQ(mm.loc.scope, "") << scopes;
    EXPECT_EQ(mm.loc.file, "") << trace;
    EXPECT_EQ(mm.loc.line, 0) << trace;
  }
}

}  // namespace
}  // namespace tpudoctor

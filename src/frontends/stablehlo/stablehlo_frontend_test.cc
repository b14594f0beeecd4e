#include <gtest/gtest.h>

#include "src/frontends/stablehlo/mlir_parser.h"
#include "tpudoctor/check/check.h"
#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/frontend/stablehlo.h"
#include "tpudoctor/ir/verify.h"

namespace tpudoctor {
namespace {

Result<LoadedModel> Load(const std::string& text) {
  return LoadStableHlo(Source{"m.mlir", text}, {});
}

LoadedModel LoadOk(const std::string& text) {
  auto m = Load(text);
  EXPECT_TRUE(m.ok()) << m.error().message;
  if (!m.ok()) return LoadedModel{Graph("empty"), "", "", {}, {}};
  EXPECT_TRUE(VerifyGraph(m->graph).empty());
  return std::move(*m);
}

const Node* FindOp(const Graph& g, std::string_view op_type) {
  for (const Node& n : g.nodes()) {
    if (n.op_type == op_type) return &n;
  }
  return nullptr;
}

TEST(MlirParser, PrettyAndGenericFormsAndResultGroups) {
  auto m = mlir::ParseMlirText(R"(module @m {
  func.func public @main(%arg0: tensor<8xf32> {jax.arg_info = "x"}, %arg1: tensor<i32>) -> (tensor<8xf32>) {
    %0:2 = "stablehlo.while"(%arg0, %arg1) ({
    ^bb0(%a: tensor<8xf32>, %b: tensor<i32>):
      %c = stablehlo.constant dense<1> : tensor<i32>
      %p = stablehlo.compare LT, %b, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }, {
    ^bb0(%a: tensor<8xf32>, %b: tensor<i32>):
      stablehlo.return %a, %b : tensor<8xf32>, tensor<i32>
    }) : (tensor<8xf32>, tensor<i32>) -> (tensor<8xf32>, tensor<i32>) loc(#loc2)
    return %0#0 : tensor<8xf32>
  }
}
#loc1 = loc("train.py":42:7)
#loc2 = loc("jit(f)/while"(#loc1))
)");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->funcs.size(), 1u);
  const mlir::MlirOp& w = m->funcs[0].body.ops[0];
  EXPECT_EQ(w.name, "stablehlo.while");
  EXPECT_EQ(w.results, (std::vector<std::string>{"0#0", "0#1"}));
  EXPECT_EQ(w.operands, (std::vector<std::string>{"arg0", "arg1"}));
  EXPECT_EQ(w.result_types, (std::vector<std::string>{"tensor<8xf32>", "tensor<i32>"}));
  ASSERT_EQ(w.regions.size(), 2u);
  EXPECT_EQ(w.regions[0].args.size(), 2u);
  EXPECT_EQ(w.loc, "#loc2");
  EXPECT_EQ(m->loc_aliases.at("#loc1"), "\"train.py\":42:7");

  auto model = LoadOk(std::string(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %x : tensor<4xf32> loc(#l)
  return %0 : tensor<4xf32>
}
#l = loc("op"("model.py":9:1))
)"));
  const Node* neg = FindOp(model.graph, "negate");
  ASSERT_NE(neg, nullptr);
  EXPECT_EQ(neg->loc.file, "model.py");
  EXPECT_EQ(neg->loc.line, 9);
  EXPECT_EQ(neg->loc.scope, "op");
}

// Regions may use values of the enclosing function; they become parameters of the computation.
TEST(StableHloFrontend, CapturedValuesBecomeOperands) {
  auto m = LoadOk(R"(module {
  func.func public @main(%arg0: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
    %k = stablehlo.constant dense<2.0> : tensor<4xf32>
    %0 = "stablehlo.case"(%i) ({
      %1 = stablehlo.subtract %arg0, %k : tensor<4xf32>
      stablehlo.return %1 : tensor<4xf32>
    }, {
      %2 = stablehlo.add %k, %arg0 : tensor<4xf32>
      stablehlo.return %2 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})");
  const Node* c = FindOp(m.graph, "conditional");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->subgraphs.size(), 2u);
  EXPECT_EQ(c->inputs.size(), 3u);  // index, %arg0, %k
  // The branches use them in different orders; their parameters follow the operands' order.
  for (const auto& sub : c->subgraphs) {
    ASSERT_EQ(sub.graph->inputs().size(), 2u);
    EXPECT_EQ(sub.graph->value(sub.graph->inputs()[0]).name, "arg0");
    EXPECT_EQ(sub.graph->value(sub.graph->inputs()[1]).name, "k");
  }
}

TEST(StableHloFrontend, DotGeneralConvolutionAndCalls) {
  auto m = LoadOk(R"(module {
  func.func private @mm(%a: tensor<2x64x128xbf16>, %b: tensor<2x128x256xbf16>) -> tensor<2x64x256xbf16> {
    %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x64x128xbf16>, tensor<2x128x256xbf16>) -> tensor<2x64x256xbf16>
    return %0 : tensor<2x64x256xbf16>
  }
  func.func public @main(%a: tensor<2x64x128xbf16>, %b: tensor<2x128x256xbf16>, %img: tensor<8x32x32x16xf32>, %w: tensor<3x3x16x32xf32>) -> (tensor<2x64x256xbf16>, tensor<8x32x32x32xf32>) {
    %0 = call @mm(%a, %b) : (tensor<2x64x128xbf16>, tensor<2x128x256xbf16>) -> tensor<2x64x256xbf16>
    %1 = stablehlo.convolution(%img, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x32x16xf32>, tensor<3x3x16x32xf32>) -> tensor<8x32x32x32xf32>
    return %0, %1 : tensor<2x64x256xbf16>, tensor<8x32x32x32xf32>
  }
})");
  const Node* call = FindOp(m.graph, "call");
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->subgraphs.size(), 1u);
  const Node* dot = FindOp(*call->subgraphs[0].graph, "dot");
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->IntsAttr("lhs_contracting_dims"), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(dot->IntsAttr("rhs_batch_dims"), (std::vector<std::int64_t>{0}));
  const Node* conv = FindOp(m.graph, "convolution");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->StringAttr("dim_labels"), "b01f_01io->b01f");
  double flops = 0;
  for (const OpCost& c : ComputeOpCosts(m.graph)) flops += c.flops;
  const double dot_flops = 2.0 * 2 * 64 * 128 * 256;
  const double conv_flops = 2.0 * 8 * 32 * 32 * 32 * 3 * 3 * 16;
  EXPECT_NEAR(flops, dot_flops + conv_flops, 0.01 * (dot_flops + conv_flops));
}

TEST(StableHloFrontend, DynamicAndBoundedDimsReachTheRules) {
  auto m = LoadOk(
      R"(func.func @main(%x: tensor<?x4xf32>, %y: tensor<?xf32, #stablehlo.bounds<16>>) -> tensor<?x4xf32> {
  %0 = stablehlo.abs %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
})");
  const auto& inputs = m.graph.inputs();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_FALSE(m.graph.value(inputs[0]).type.shape.dim(0).is_static());
  EXPECT_TRUE(m.graph.value(inputs[1]).type.shape.dim(0).is_bounded());
  EXPECT_EQ(m.graph.value(inputs[1]).type.shape.dim(0).bound(), 16);
  EXPECT_TRUE(m.graph.facts().xla_program);
  bool xla003 = false;
  for (const Diagnostic& d : RunChecks(m.graph, **FindTarget(kDefaultTarget)))
    xla003 |= d.code == "XLA003";
  EXPECT_TRUE(xla003);
}

TEST(StableHloFrontend, CustomCallTargetsAreJudged) {
  auto m = LoadOk(R"(func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.custom_call @cusolver_getrf_ffi(%x) {api_version = 4 : i32} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "stablehlo.custom_call"(%0) {call_target_name = "Sharding"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
})");
  std::vector<std::string> targets;
  for (const Node& n : m.graph.nodes()) {
    if (n.op_type == "custom-call") targets.push_back(*n.StringAttr("custom_call_target"));
  }
  EXPECT_EQ(targets, (std::vector<std::string>{"cusolver_getrf_ffi", "Sharding"}));
}

TEST(StableHloFrontend, BadInputIsALineColumnError) {
  struct Case {
    const char* text;
    const char* expect;
  };
  for (const Case& c : std::vector<Case>{
           {"module {\n  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n", "never closed"},
           {"func.func @main(%x: tensor<4xq9>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}",
            "cannot read"},
           {"func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.abs %zz : "
            "tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
            "`%zz`"},
           {"func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.abs %x : "
            "tensor<4xf32>\n  return %0 : tensor<4xf32>\n",
            "never closed"},
           {"func.func @main(%x: tensor<4xf32> {a = \"unterminated) {\n}", "never closed"},
           {"module {\n}\n", "no functions"},
           {"func.func @main(%x tensor<4xf32>) {\n}", "`%name: type`"},
       }) {
    auto r = Load(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.rfind("m.mlir:", 0), 0u) << r.error().message;
  }
}

TEST(StableHloFrontend, DeepNestingIsAnErrorNotACrash) {
  std::string deep =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.abs %x {a = ";
  deep += std::string(100000, '[');
  deep += "} : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n";
  EXPECT_FALSE(Load(deep).ok());
  std::string regions = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n";
  for (int i = 0; i < 200; ++i)
    regions += "  %" + std::to_string(i) + " = \"stablehlo.case\"(%x) ({\n";
  EXPECT_FALSE(Load(regions).ok());
}

}  // namespace
}  // namespace tpudoctor

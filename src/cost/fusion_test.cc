// The XLA fusion model: hand-checked kernels on small graphs, and the grouping of the unoptimized
// JAX programs compared, op by op, with the kernels XLA formed in their optimized dumps.
#include "tpudoctor/cost/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "tests/test_util.h"

namespace tpudoctor {
namespace {

Graph Parse(const char* text) { return testing::ParseOrDie(text); }

FusionPlan Plan(const Graph& g, bool epilogue = true) {
  FusionOptions o;
  o.epilogue = epilogue;
  return PlanFusions(g, ComputeOpCosts(g), o);
}

constexpr const char* kDense = R"(graph g {
  input %x: f32[64,256]
  init %w: f32[256,512]
  init %b: f32[512]
  %y: f32[64,512] = MatMul[matmul](%x, %w)
  %z: f32[64,512] = Add[elementwise](%y, %b)
  %r: f32[64,512] = Relu[elementwise](%z)
  output %r
})";

TEST(FusionTest, DenseLayerIsOneKernelWithItsEpilogue) {
  Graph g = Parse(kDense);
  FusionPlan plan = Plan(g);
  ASSERT_EQ(plan.kernels.size(), 1u);
  const FusionKernel& dense = plan.kernels[0];
  EXPECT_EQ(dense.kind, FusionRole::kMatrix);
  EXPECT_EQ(dense.nodes.size(), 3u);  // MatMul, Add, Relu
  EXPECT_EQ(dense.root, NodeId{2});   // it writes the Relu's result
  EXPECT_DOUBLE_EQ(dense.matrix_flops, 2.0 * 64 * 256 * 512);
  // Reads x, w and b, writes the activation once: the matmul's own result never reaches HBM.
  EXPECT_DOUBLE_EQ(dense.bytes_in, 4.0 * (64 * 256 + 256 * 512 + 512));
  EXPECT_DOUBLE_EQ(dense.bytes_out, 4.0 * 64 * 512);
}

// An embedding lookup reads the rows it gathers (and its indices), not the whole table: 8 tokens
// of a 50,000 x 512 table move 8 rows, whatever the table's size.
TEST(FusionTest, AGatherReadsItsRowsNotItsTable) {
  Graph g = Parse(R"(graph g {
  input %ids: s32[1,8]
  init %table: f32[50000,512]
  %e: f32[1,8,512] = Gather[gather](%table, %ids)
  %s: f32[1,8,512] = Mul[elementwise](%e, %e)
  output %s
})");
  FusionPlan plan = Plan(g);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(plan.kernels[0].bytes_in, 4.0 * 8 * 512 + 4.0 * 8);  // the rows, the ids
  EXPECT_DOUBLE_EQ(plan.kernels[0].bytes_out, 4.0 * 8 * 512);
}

TEST(FusionTest, WithoutEpilogueFusionTheBiasAddIsItsOwnKernel) {
  Graph g = Parse(kDense);
  FusionPlan plan = Plan(g, /*epilogue=*/false);
  ASSERT_EQ(plan.kernels.size(), 2u);  // add+relu, matmul
  EXPECT_EQ(plan.kernels[0].nodes.size(), 2u);
  EXPECT_EQ(plan.kernels[1].kind, FusionRole::kMatrix);
  EXPECT_DOUBLE_EQ(plan.kernels[0].bytes_in, 4.0 * (64 * 512 + 512));
}

TEST(FusionTest, ReductionTakesThePointwiseChainBeforeIt) {
  Graph g = Parse(R"(graph g {
  input %x: f32[64,512]
  init %b: f32[512]
  %z: f32[64,512] = Add[elementwise](%x, %b)
  %e: f32[64,512] = Exp[elementwise](%z)
  %s: f32[64] = ReduceSum[reduce](%e) {axes=[1], keepdims=0}
  %n: f32[64] = Neg[elementwise](%s)
  output %n
})");
  FusionPlan plan = Plan(g);
  ASSERT_EQ(plan.kernels.size(), 2u);  // the consumer of a reduction starts a new kernel
  EXPECT_EQ(plan.kernels[1].kind, FusionRole::kReduction);
  EXPECT_EQ(plan.kernels[1].nodes.size(), 3u);
  EXPECT_DOUBLE_EQ(plan.kernels[1].bytes_in, 4.0 * (64 * 512 + 512));
  EXPECT_DOUBLE_EQ(plan.kernels[1].bytes_out, 4.0 * 64);
}

TEST(FusionTest, CheapProducersAreDuplicatedExpensiveOnesMaterialized) {
  // %c (a cheap multiply) is read by two reductions: recomputed in both, no kernel of its own.
  // %t (tanh, expensive) read by two reductions: a kernel of its own, its result through HBM.
  Graph g = Parse(R"(graph g {
  input %x: f32[128,1024]
  %c: f32[128,1024] = Mul[elementwise](%x, %x)
  %a: f32[128] = ReduceSum[reduce](%c) {axes=[1], keepdims=0}
  %m: f32[128] = ReduceMax[reduce](%c) {axes=[1], keepdims=0}
  %t: f32[128,1024] = Tanh[elementwise](%x)
  %a2: f32[128] = ReduceSum[reduce](%t) {axes=[1], keepdims=0}
  %m2: f32[128] = ReduceMax[reduce](%t) {axes=[1], keepdims=0}
  output %a
  output %m
  output %a2
  output %m2
})");
  FusionPlan plan = Plan(g);
  EXPECT_EQ(plan.kernels.size(), 5u);  // four reductions + tanh
  EXPECT_EQ(plan.kernel_of[0], -1);    // the multiply lives inside both reductions
  EXPECT_NE(plan.kernel_of[3], -1);    // tanh is materialized
  const FusionKernel& tanh = plan.kernels[static_cast<std::size_t>(plan.kernel_of[3])];
  EXPECT_DOUBLE_EQ(tanh.bytes_out, 4.0 * 128 * 1024);
}

TEST(FusionTest, ProgramOutputsStillFuseIntoTheirConsumer) {
  // Adam's two moments are returned and read by the parameter update: one multi-output kernel.
  Graph g = Parse(R"(graph g {
  input %g: f32[1024]
  input %m: f32[1024]
  input %v: f32[1024]
  input %p: f32[1024]
  %m1: f32[1024] = Add[elementwise](%m, %g)
  %g2: f32[1024] = Mul[elementwise](%g, %g)
  %v1: f32[1024] = Add[elementwise](%v, %g2)
  %s: f32[1024] = Sqrt[elementwise](%v1)
  %u: f32[1024] = Div[elementwise](%m1, %s)
  %p1: f32[1024] = Sub[elementwise](%p, %u)
  output %p1
  output %m1
  output %v1
})");
  FusionPlan plan = Plan(g);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(plan.kernels[0].bytes_in, 4.0 * 4 * 1024);
  EXPECT_DOUBLE_EQ(plan.kernels[0].bytes_out, 4.0 * 3 * 1024);
}

// What a plan sends through HBM: the tensors its kernels write (by dtype and element count, which
// survive XLA's relayouts and bitcasts), and the bytes its kernels read and write.
struct Traffic {
  std::multiset<std::string> written;
  std::size_t kernels = 0;
  double bytes = 0;
};

Traffic TrafficOf(const Graph& g, const FusionPlan& plan) {
  Traffic t;
  t.kernels = plan.kernels.size();
  for (const FusionKernel& k : plan.kernels) {
    t.bytes += k.bytes_in + k.bytes_out;
    for (ValueId v : k.written) {
      const TensorType& type = g.value(v).type;
      t.written.insert(std::string(NameOf(type.dtype)) + " x " +
                       std::to_string(type.shape.NumElements().value_or(-1)));
    }
  }
  return t;
}

// Multiset Jaccard: tensors both plans write over tensors either writes.
double Agreement(const std::multiset<std::string>& a, const std::multiset<std::string>& b) {
  std::vector<std::string> common;
  std::ranges::set_intersection(a, b, std::back_inserter(common));
  const std::size_t either = a.size() + b.size() - common.size();
  return either == 0 ? 1.0 : static_cast<double>(common.size()) / either;
}

// Each op of the unoptimized program either writes its result to HBM or hands it to the next op
// inside a kernel. XLA's decision is in the optimized dump of the same program (XLA:GPU, whose
// Triton/cuBLAS matmuls keep their bias add in a separate loop fusion: no epilogue here). The
// optimized program, planned the same way, is its own kernels (its fusions are opaque), so the
// same accounting measures XLA's traffic.
TEST(FusionTest, GroupingAgreesWithXlasOptimizedPrograms) {
  const std::vector<std::string> programs = {"big_matmul_bf16",     "f64_mlp",
                                             "flax_cnn_train_adam", "flax_mlp_infer",
                                             "flax_mlp_train_adam", "flax_transformer_block_infer",
                                             "int64_ops",           "odd_matmul"};
  double model_agree = 0, naive_agree = 0, model_bytes = 0, naive_bytes = 0;
  for (const std::string& name : programs) {
    SCOPED_TRACE(name);
    const Graph before = testing::LoadOrDie(testing::Testdata("jax/" + name + ".hlo.txt")).graph;
    const Graph after = testing::LoadOrDie(testing::Testdata("jax/" + name + ".opt_hlo.txt")).graph;
    const auto before_costs = ComputeOpCosts(before);
    const Traffic xla = TrafficOf(after, PlanFusions(after, ComputeOpCosts(after), {}));
    const Traffic model = TrafficOf(before, Plan(before, /*epilogue=*/true));
    // The op-by-op view an eager framework has: every op that is not a view writes its result.
    Traffic naive;
    for (const Node& n : before.nodes()) {
      if (RoleOf(n, before_costs[static_cast<std::size_t>(n.id)]) == FusionRole::kFree) continue;
      ++naive.kernels;
      const OpCost& c = before_costs[static_cast<std::size_t>(n.id)];
      naive.bytes += c.bytes_read + c.bytes_written;
      for (ValueId v : n.outputs) {
        const TensorType& type = before.value(v).type;
        naive.written.insert(std::string(NameOf(type.dtype)) + " x " +
                             std::to_string(type.shape.NumElements().value_or(-1)));
      }
    }
    const double a = Agreement(xla.written, model.written);
    const double b = Agreement(xla.written, naive.written);
    const double bytes_error = model.bytes / xla.bytes - 1;
    const double naive_bytes_error = naive.bytes / xla.bytes - 1;
    std::printf(
        "%-29s kernels XLA %3zu model %3zu op-by-op %3zu | written tensors agree: model %3.0f%% "
        "op-by-op %3.0f%% | HBM traffic vs XLA: model %+.0f%% op-by-op %+.0f%%\n",
        name.c_str(), xla.kernels, model.kernels, naive.kernels, 100 * a, 100 * b,
        100 * bytes_error, 100 * naive_bytes_error);
    model_agree += a / programs.size();
    naive_agree += b / programs.size();
    model_bytes += std::abs(bytes_error) / programs.size();
    naive_bytes += std::abs(naive_bytes_error) / programs.size();
  }
  std::printf(
      "mean: written tensors agree model %.0f%%, op by op %.0f%%; |traffic error| model %.0f%%, "
      "op by op %.0f%%\n",
      100 * model_agree, 100 * naive_agree, 100 * model_bytes, 100 * naive_bytes);
  EXPECT_GE(model_agree, 0.7);
  EXPECT_GT(model_agree, naive_agree + 0.25);
  EXPECT_LE(model_bytes, 0.3);
  EXPECT_LT(model_bytes, naive_bytes / 2);
}

}  // namespace
}  // namespace tpudoctor

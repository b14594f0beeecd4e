// Hand-computed FLOPs, bytes, padding and memory on tiny graphs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "tests/test_util.h"
#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/ir/text.h"
#include "tpudoctor/support/embedded.h"

namespace tpudoctor {
namespace {

Graph Parse(const char* text) { return testing::ParseOrDie(text); }

const TargetSpec& T(const char* name) { return **FindTarget(name); }

// One 4096 x 4096 by 4096 x 4096 matmul, the smallest step that is all matrix work.
Graph SquareMatmul() {
  return testing::ParseOrDie(R"(graph g {
  input %x: f32[4096,4096]
  init %w: f32[4096,4096]
  %y: f32[4096,4096] = MatMul[matmul](%x, %w)
  output %y
})");
}

// A target's XLA calibration with its kernels timed by the roofline's max(compute, memory), for
// tests of the compute side alone (xla-tpu adds a matmul kernel's memory time to it).
Calibration FullOverlap(const char* target) {
  Calibration c = CalibrationFor(T(target), *ParseRuntime("xla"));
  c.matrix_memory_overlap = 1;
  return c;
}

TEST(OpCostTest, SingleMatmul) {
  // [64,256] x [256,512]: 2*64*256*512 FLOPs; reads 64*256*4 + 256*512*4, writes 64*512*4 bytes.
  Graph g = Parse(R"(graph g {
  input %x: f32[64,256]
  init %w: f32[256,512]
  %y: f32[64,512] = MatMul[matmul](%x, %w)
  output %y
})");
  auto costs = ComputeOpCosts(g);
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_EQ(costs[0].cls, CostClass::kMatrix);
  EXPECT_DOUBLE_EQ(costs[0].flops, 2.0 * 64 * 256 * 512);
  EXPECT_DOUBLE_EQ(costs[0].bytes_read, 64 * 256 * 4 + 256 * 512 * 4);
  EXPECT_DOUBLE_EQ(costs[0].bytes_written, 64 * 512 * 4);
  ASSERT_TRUE(costs[0].matmul.has_value());
  EXPECT_DOUBLE_EQ(costs[0].matmul->m, 64);
  EXPECT_DOUBLE_EQ(costs[0].matmul->n, 512);
  EXPECT_DOUBLE_EQ(costs[0].matmul->k, 256);
  // At bf16 the same traffic halves.
  EXPECT_DOUBLE_EQ(ComputeOpCosts(g, 2)[0].bytes_written, 64 * 512 * 2);
}

TEST(OpCostTest, ConvAsImplicitGemm) {
  // 3x3 conv, 64 -> 128 channels, 8x8 output, batch 2: 2 * 2*8*8 * 128 * (64*9) FLOPs.
  Graph g = Parse(R"(graph g {
  input %x: f32[2,64,8,8]
  init %w: f32[128,64,3,3]
  %y: f32[2,128,8,8] = Conv[conv](%x, %w) {pads=[1,1,1,1]}
  output %y
})");
  auto c = ComputeOpCosts(g)[0];
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * (2 * 8 * 8) * 128 * (64 * 9));
  EXPECT_DOUBLE_EQ(c.matmul->m, 128);
  EXPECT_DOUBLE_EQ(c.matmul->n, 128);
  EXPECT_DOUBLE_EQ(c.matmul->k, 576);
}

TEST(OpCostTest, ViewsAreFreeUnknownOpsAreCounted) {
  Graph g = Parse(R"(graph g {
  input %x: f32[4,6]
  init %s: s64[2] known=[6,4]
  %y: f32[6,4] = Reshape[layout](%x, %s)
  %z: f32[6,4] = "com.example::Fancy"[unknown](%y)
  output %z
})");
  auto costs = ComputeOpCosts(g);
  EXPECT_EQ(costs[0].cls, CostClass::kFree);
  EXPECT_FALSE(costs[1].known);
}

// A scale of 1/sqrt(head dim) computed from a tensor's shape is a number the framework knows
// before the step: no kernel. The division of the activations by it is one; so is filling a
// large tensor from a shape.
TEST(OpCostTest, ShapeArithmeticIsFree) {
  Graph g = Parse(R"(graph g {
  input %x: f32[8,64]
  init %i: s64[] known=[1]
  %s: s64[2] = Shape[shape_of](%x)
  %d: s64[] = Gather[gather](%s, %i)
  %f: f32[] = Cast[cast](%d)
  %r: f32[] = Sqrt[elementwise](%f)
  %y: f32[8,64] = Div[elementwise](%x, %r)
  %z: f32[8,64] = ConstantOfShape[constant](%s)
  %big: f32[4096,4096] = Expand[layout](%r, %s)
  output %y
  output %z
  output %big
})");
  const auto costs = ComputeOpCosts(g);
  for (const char* name : {"s", "d", "f", "r"}) {
    const Value& v = g.value(*g.FindValue(name));
    EXPECT_EQ(costs[static_cast<std::size_t>(v.producer)].cls, CostClass::kFree) << name;
  }
  EXPECT_EQ(costs[static_cast<std::size_t>(g.value(*g.FindValue("y")).producer)].cls,
            CostClass::kVector);
  EXPECT_GT(costs[static_cast<std::size_t>(g.value(*g.FindValue("big")).producer)].bytes_written,
            0);
}

TEST(LayoutTest, TpuTilesPadTheMinorDims) {
  const TargetSpec& v5e = T("tpu-v5e");
  // f32[8,2048,3]: minor 3 -> 128, second-minor 2048 stays: 8*2048*128*4 bytes.
  TensorType points{ValueKind::kTensor, DType::kFloat32, Shape::OfStatic({8, 2048, 3})};
  EXPECT_DOUBLE_EQ(*LayoutBytes(points, v5e, 0), 8.0 * 2048 * 128 * 4);
  // Second-minor 3 uses the compact 4-row tile: f32[3,256] -> 4*256*4.
  TensorType small{ValueKind::kTensor, DType::kFloat32, Shape::OfStatic({3, 256})};
  EXPECT_DOUBLE_EQ(*LayoutBytes(small, v5e, 0), 4.0 * 256 * 4);
  // 10 rows pad to 16 (8-row tiles).
  TensorType rows{ValueKind::kTensor, DType::kFloat32, Shape::OfStatic({10, 128})};
  EXPECT_DOUBLE_EQ(*LayoutBytes(rows, v5e, 0), 16.0 * 128 * 4);
  // Channels-minor layout for conv nets: [N,C,H,W] = [2,3,16,16] is stored as [2,16,16,3].
  TensorType image{ValueKind::kTensor, DType::kFloat32, Shape::OfStatic({2, 3, 16, 16})};
  EXPECT_DOUBLE_EQ(*LayoutBytes(image, v5e, 0, /*channels_minor=*/true), 2.0 * 16 * 16 * 128 * 4);
  // GPUs store tensors densely.
  EXPECT_DOUBLE_EQ(*LayoutBytes(points, T("nvidia-h100"), 0), 8.0 * 2048 * 3 * 4);
}

TEST(EstimateTest, MlpWithAdamMemory) {
  // Two layers, 256 -> 512 -> 10: parameters 256*512 + 512 + 512*10 + 10 = 136,842.
  Graph g = Parse(R"(graph g {
  input %x: f32[32,256]
  init %w1: f32[256,512]
  init %b1: f32[512]
  init %w2: f32[512,10]
  init %b2: f32[10]
  %h: f32[32,512] = Gemm[matmul](%x, %w1, %b1)
  %r: f32[32,512] = Relu[elementwise](%h)
  %y: f32[32,10] = Gemm[matmul](%r, %w2, %b2)
  output %y
})");
  EstimateOptions o;
  o.train = true;
  o.optimizer = Optimizer::kAdam;
  o.precision = Precision::kFp32;
  o.batch = 32;
  auto e = EstimateStep(g, T("nvidia-h100"), o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  const double params = 256 * 512 + 512 + 512 * 10 + 10;
  EXPECT_DOUBLE_EQ(e->memory.weights, params * 4);
  EXPECT_DOUBLE_EQ(e->memory.gradients, params * 4);
  EXPECT_DOUBLE_EQ(e->memory.optimizer_state, params * 8);  // Adam: m and v in fp32
  EXPECT_DOUBLE_EQ(e->memory.master_weights, 0);
  // Saved for backward: x (input of the first Gemm), h (input of Relu), r (input of the second
  // Gemm).
  EXPECT_DOUBLE_EQ(e->components.saved_bytes, (32 * 256 + 32 * 512 + 32 * 512) * 4.0);
  // Forward matrix FLOPs 2*32*256*512 + 2*32*512*10, three times for a training step.
  EXPECT_DOUBLE_EQ(e->model_flops, 3 * (2.0 * 32 * 256 * 512 + 2.0 * 32 * 512 * 10));
  // Mixed precision: bf16 weights and gradients, fp32 master copy.
  o.precision = Precision::kMixed;
  auto mixed = EstimateStep(g, T("nvidia-h100"), o);
  EXPECT_DOUBLE_EQ(mixed->memory.weights, params * 2);
  EXPECT_DOUBLE_EQ(mixed->memory.master_weights, params * 4);
}

// A training step is forward + backward_ratio x forward + the optimizer + the host passes; every
// fitted factor moves the step time the way it says.
TEST(EstimateTest, TrainingStepTimeReadsEveryFactor) {
  Graph g = Parse(R"(graph g {
  input %x: f32[4096,4096]
  init %w: f32[4096,4096]
  %y: f32[4096,4096] = MatMul[matmul](%x, %w)
  %r: f32[4096,4096] = Relu[elementwise](%y)
  output %r
})");
  Calibration cal;
  cal.name = "test";
  cal.matrix_efficiency = 0.5;
  cal.memory_efficiency = 1.0;
  cal.kernel_overhead_us = 0;
  cal.backward_ratio = 2.0;
  EstimateOptions o;
  o.train = true;
  o.optimizer = Optimizer::kSgd;
  o.precision = Precision::kBf16;
  o.batch = 4096;
  o.runtime = *ParseRuntime("eager");
  o.calibration = &cal;
  const TargetSpec& h100 = T("nvidia-h100");
  auto base = EstimateStep(g, h100, o);
  ASSERT_TRUE(base.ok()) << base.error().message;
  EXPECT_NEAR(base->backward_ms, 2.0 * base->forward_ms, 1e-9);
  // The matmul's time at half the peak: 2 * 4096^3 FLOPs / (989 TFLOP/s * 0.5).
  const double matmul_ms = 2.0 * 4096 * 4096 * 4096 / (h100.bf16_tflops.value() * 1e12 * 0.5) * 1e3;
  const double relu_ms = 2.0 * 4096 * 4096 * 2 / (h100.hbm_gbps.value() * 1e9) * 1e3;
  EXPECT_NEAR(base->forward_ms, matmul_ms + relu_ms, 1e-6);
  // The vector kernels' ratio moves the ReLU's backward alone; the matmul's is its own.
  cal.backward_ratio = 3.0;
  auto slower = EstimateStep(g, h100, o);
  EXPECT_NEAR(slower->backward_ms, 2.0 * matmul_ms + 3.0 * relu_ms, 1e-9);
  cal.matrix_backward_ratio = 3.0;
  auto slowest = EstimateStep(g, h100, o);
  EXPECT_NEAR(slowest->backward_ms, 3.0 * base->forward_ms, 1e-9);
  cal.backward_ratio = 2.0;
  cal.matrix_backward_ratio = 2.0;
  // The host runs ahead of the device: three loop passes of 1 ms plus 100 us per launched op
  // (2 forward, 3 backward) take 3.5 ms, longer than the device's work, so they bound the step.
  cal.step_overhead_us = 1000;
  cal.host_op_us = 100;
  auto host = EstimateStep(g, h100, o);
  EXPECT_NEAR(host->host_ms, 3.5, 1e-9);
  ASSERT_LT(base->step_ms, 3.5);
  EXPECT_NEAR(host->step_ms, 3.5, 1e-9);
  // A device-bound step does not see the host at all.
  cal.step_overhead_us = 10;
  cal.host_op_us = 1;
  auto device_bound = EstimateStep(g, h100, o);
  EXPECT_DOUBLE_EQ(device_bound->step_ms, base->step_ms);
  cal.step_overhead_us = 0;
  cal.host_op_us = 0;
  cal.kernel_overhead_us = 10;  // 2 kernels forward, 3 backward (a matmul's two gradients)
  auto launches = EstimateStep(g, h100, o);
  EXPECT_NEAR(launches->forward_ms - base->forward_ms, 0.02, 1e-9);
  EXPECT_NEAR(launches->backward_ms - base->backward_ms, 0.03, 1e-9);
}

// torch.onnx keeps one copy of equal initializers and re-exposes each duplicate through an
// Identity: both biases are parameters, with gradients and optimizer state.
TEST(EstimateTest, DeduplicatedInitializersAreParameters) {
  Graph g = Parse(R"(graph g {
  input %x: f32[32,512]
  init %b: f32[512]
  %b2: f32[512] = Identity[layout](%b)
  %h: f32[32,512] = Add[elementwise](%x, %b)
  %y: f32[32,512] = Add[elementwise](%h, %b2)
  output %y
})");
  EstimateOptions o;
  o.train = true;
  o.precision = Precision::kFp32;
  o.batch = 32;
  auto e = EstimateStep(g, T("nvidia-h100"), o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_DOUBLE_EQ(e->memory.weights, 2 * 512 * 4);
  EXPECT_DOUBLE_EQ(e->components.parameter_tensors, 2);
}

// PyTorch's native depthwise kernels are bound by memory at their own share of the bandwidth,
// and their backward has its own ratio to the forward.
TEST(EstimateTest, DepthwiseConvolutionsHaveTheirOwnBandwidthAndBackward) {
  Graph g = Parse(R"(graph g {
  input %x: f32[8,64,56,56]
  init %w: f32[64,1,3,3]
  %y: f32[8,64,56,56] = Conv[conv](%x, %w) {group=64, kernel_shape=[3,3], pads=[1,1,1,1]}
  output %y
})");
  Calibration cal;
  cal.name = "test";
  cal.memory_efficiency = 1.0;
  cal.conv_efficiency = 1.0;
  cal.depthwise_efficiency = 1.0;
  cal.backward_ratio = 2.0;
  EstimateOptions o;
  o.optimizer = Optimizer::kSgd;
  o.precision = Precision::kBf16;
  o.batch = 8;
  o.runtime = *ParseRuntime("eager");
  o.calibration = &cal;
  const TargetSpec& h100 = T("nvidia-h100");
  auto base = EstimateStep(g, h100, o);
  ASSERT_TRUE(base.ok()) << base.error().message;
  const double bytes = (2.0 * 8 * 64 * 56 * 56 + 64 * 9) * 2;  // x and y, the weight, in bf16
  EXPECT_DOUBLE_EQ(base->components.depthwise_bytes, bytes);
  EXPECT_NEAR(base->forward_ms, bytes / (h100.hbm_gbps.value() * 1e9) * 1e3, 1e-9);
  cal.depthwise_memory_efficiency = 0.1;
  auto slow = EstimateStep(g, h100, o);
  EXPECT_NEAR(slow->forward_ms, 10 * base->forward_ms, 1e-9);
  o.train = true;  // (with the BatchNorm the export folded into the conv)
  auto train = EstimateStep(g, h100, o);
  EXPECT_NEAR(train->backward_ms, 2 * train->forward_ms, 1e-9);
  cal.depthwise_backward_ratio = 5.0;
  train = EstimateStep(g, h100, o);
  EXPECT_NEAR(train->backward_ms, 5 * train->forward_ms, 1e-9);
  o.precision = Precision::kFp16;  // cuDNN's depthwise kernels: the general factors
  train = EstimateStep(g, h100, o);
  EXPECT_NEAR(train->backward_ms, 2 * train->forward_ms, 1e-9);
}

// An inference export folds each BatchNorm into its conv; training runs it again, reading and
// writing the conv's output once more. On a GPU the convolution is a cuDNN call that no compiler
// fuses into, so under a fused runtime the BatchNorm is a kernel of its own; XLA:TPU takes it
// into the convolution's fusion, where a compute-bound convolution hides its bytes.
TEST(EstimateTest, FoldedBatchNormRunsApartOnAGpuAndInsideTheConvFusionOnATpu) {
  Graph g = Parse(R"(graph g {
  input %x: f32[64,256,56,56]
  init %w: f32[256,256,3,3]
  %y: f32[64,256,56,56] = Conv[conv](%x, %w) {kernel_shape=[3,3], pads=[1,1,1,1]}
  %r: f32[64,256,56,56] = Relu[elementwise](%y)
  output %r
})");
  Calibration cal;
  cal.name = "test";
  cal.memory_efficiency = 1.0;
  cal.conv_efficiency = 0.5;
  cal.matrix_efficiency = 0.5;
  cal.backward_ratio = 3.0;
  auto forward_ms = [&](const char* target, bool train) {
    EstimateOptions o;
    o.batch = 64;
    o.train = train;
    o.optimizer = Optimizer::kSgd;
    o.precision = Precision::kBf16;
    o.runtime = *ParseRuntime("compiled");
    o.calibration = &cal;
    auto e = EstimateStep(g, T(target), o);
    EXPECT_TRUE(e.ok()) << e.error().message;
    return e.ok() ? std::pair{e->forward_ms, e->backward_ms} : std::pair{0.0, 0.0};
  };
  const double y_bytes = 64.0 * 256 * 56 * 56 * 2;         // the conv's output in bf16
  const double batchnorm_ms = 2 * y_bytes / 2039e9 * 1e3;  // read and written, A100 80GB
  const auto [gpu_infer, unused] = forward_ms("nvidia-a100-80gb", false);
  const auto [gpu_train, gpu_backward] = forward_ms("nvidia-a100-80gb", true);
  EXPECT_NEAR(gpu_train - gpu_infer, batchnorm_ms, 1e-9);
  // The conv (+ReLU) kernel's backward is 2x its forward, the BatchNorm's the vector ratio.
  EXPECT_NEAR(gpu_backward, 2 * gpu_infer + 3 * batchnorm_ms, 1e-9);
  // 236.8 GFLOP at half a v5p's 459 TFLOP/s outlasts every byte of the fusion.
  EXPECT_NEAR(forward_ms("tpu-v5p", true).first, forward_ms("tpu-v5p", false).first, 1e-9);
}

// A BatchNorm a graph keeps (a training-mode export, Keras, TensorFlow) is an affine map once its
// statistics are known: at inference it fuses into the conv's kernel with the ReLU after it; in
// training it normalizes with its batch's statistics, which the conv's kernel cannot apply before
// it has written its whole output, so the BatchNorm and ReLU are a kernel of their own that reads
// the conv's output twice (the statistics, then the normalization) and writes the ReLU's.
TEST(EstimateTest, AKeptBatchNormFusesAtInferenceAndReadsItsInputTwiceInTraining) {
  Graph g = Parse(R"(graph g {
  input %x: f32[64,256,56,56]
  init %w: f32[256,256,3,3]
  init %scale: f32[256]
  init %bias: f32[256]
  init %mean: f32[256]
  init %var: f32[256]
  %y: f32[64,256,56,56] = Conv[conv](%x, %w) {kernel_shape=[3,3], pads=[1,1,1,1]}
  %n: f32[64,256,56,56], %rm: f32[256], %rv: f32[256] = BatchNormalization[normalization](%y, %scale, %bias, %mean, %var) {training_mode=1}
  %r: f32[64,256,56,56] = Relu[elementwise](%n)
  output %r
})");
  Calibration cal;
  cal.name = "test";
  cal.memory_efficiency = 1.0;
  cal.conv_efficiency = 0.5;
  cal.matrix_efficiency = 0.5;
  auto run = [&](bool train) {
    EstimateOptions o;
    o.batch = 64;
    o.train = train;
    o.optimizer = Optimizer::kSgd;
    o.precision = Precision::kBf16;
    o.runtime = *ParseRuntime("compiled");
    o.calibration = &cal;
    auto e = EstimateStep(g, T("nvidia-a100-80gb"), o);
    EXPECT_TRUE(e.ok()) << e.error().message;
    return e.ok() ? *e : Estimate{};
  };
  const Estimate infer = run(false), train = run(true);
  EXPECT_EQ(infer.kernels, 1);                                // conv + BatchNorm + ReLU
  EXPECT_EQ(train.kernels, 2);                                // conv; BatchNorm + ReLU
  const double y_bytes = 64.0 * 256 * 56 * 56 * 2;            // bf16
  const double params_bytes = 4 * 256 * 2.0 + 2 * 256 * 2.0;  // read, and the statistics written
  const double conv_ms = 2.0 * 64 * 256 * 56 * 56 * 256 * 9 / (312e12 * 0.5) * 1e3;
  EXPECT_NEAR(infer.forward_ms, conv_ms, 1e-9);  // compute-bound: its bytes hide
  EXPECT_NEAR(train.forward_ms - conv_ms, (3 * y_bytes + params_bytes) / 2039e9 * 1e3, 1e-6);
}

// --channels-last: NHWC convolutions run on the tensor cores at the precision's rate times their
// own factor; NCHW ones (eager's default) at the bf16 rate times conv_efficiency whatever the
// precision. A convolution of 236 GFLOP over 200 MB is compute-bound on an A100.
TEST(EstimateTest, ChannelsLastConvolutionsRunAtThePrecisionsRate) {
  Graph g = Parse(R"(graph g {
  input %x: f32[64,256,56,56]
  init %w: f32[256,256,3,3]
  %y: f32[64,256,56,56] = Conv[conv](%x, %w) {kernel_shape=[3,3], pads=[1,1,1,1]}
  output %y
})");
  Calibration cal;
  cal.name = "test";
  cal.memory_efficiency = 1.0;
  cal.conv_efficiency = 0.1;
  cal.conv_rate_ignores_precision = true;
  cal.channels_last_conv_efficiency = 0.5;
  auto forward_ms = [&](const char* target, Precision p, bool channels_last) {
    EstimateOptions o;
    o.batch = 64;
    o.precision = p;
    o.runtime = *ParseRuntime("eager");
    o.calibration = &cal;
    o.channels_last = channels_last;
    auto e = EstimateStep(g, T(target), o);
    EXPECT_TRUE(e.ok());
    return e.ok() ? e->forward_ms : 0.0;
  };
  const double flops = 2.0 * 64 * 256 * 56 * 56 * 256 * 9;
  const double a100_fp16 = 312e12;  // tensor-core peak, the bf16 rate too
  EXPECT_NEAR(forward_ms("nvidia-a100-80gb", Precision::kFp16, false),
              flops / (a100_fp16 * 0.1) * 1e3, 1e-6);
  EXPECT_NEAR(forward_ms("nvidia-a100-80gb", Precision::kFp16, true),
              flops / (a100_fp16 * 0.5) * 1e3, 1e-6);
  // fp32: NCHW stays at the bf16 rate; NHWC follows the precision (TF32, half the bf16 rate).
  EXPECT_NEAR(forward_ms("nvidia-a100-80gb", Precision::kFp32, false),
              forward_ms("nvidia-a100-80gb", Precision::kFp16, false), 1e-9);
  EXPECT_NEAR(forward_ms("nvidia-a100-80gb", Precision::kFp32, true),
              2 * forward_ms("nvidia-a100-80gb", Precision::kFp16, true), 1e-6);
  // XLA lays 16-bit convolutions out NHWC by itself on a GPU (no flag needed), fp32 ones NCHW.
  auto xla_ms = [&](Precision p) {
    EstimateOptions o;
    o.batch = 64;
    o.precision = p;
    o.runtime = *ParseRuntime("xla");
    o.calibration = &cal;
    auto e = EstimateStep(g, T("nvidia-a100-80gb"), o);
    EXPECT_TRUE(e.ok());
    return e.ok() ? e->forward_ms : 0.0;
  };
  EXPECT_NEAR(xla_ms(Precision::kBf16), flops / (a100_fp16 * 0.5) * 1e3, 1e-6);
  EXPECT_NEAR(xla_ms(Precision::kFp32), flops / (a100_fp16 * 0.1) * 1e3, 1e-6);
  // Without a channels-last factor the flag changes nothing, and the assumptions say so.
  cal.channels_last_conv_efficiency.reset();
  EXPECT_DOUBLE_EQ(forward_ms("nvidia-a100-80gb", Precision::kFp16, true),
                   forward_ms("nvidia-a100-80gb", Precision::kFp16, false));
  EstimateOptions o;
  o.batch = 64;
  o.channels_last = true;
  o.runtime = *ParseRuntime("eager");
  o.calibration = &cal;
  auto e = EstimateStep(g, T("nvidia-a100-80gb"), o);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(std::any_of(e->assumptions.begin(), e->assumptions.end(), [](const std::string& a) {
    return a.find("no channels-last factor") != std::string::npos;
  }));
  // On a TPU XLA picks the layouts: the flag changes nothing there either.
  o.runtime = Runtime();
  o.calibration = nullptr;
  auto tpu = EstimateStep(g, T("tpu-v5e"), o);
  o.channels_last = false;
  auto tpu_nchw = EstimateStep(g, T("tpu-v5e"), o);
  ASSERT_TRUE(tpu.ok() && tpu_nchw.ok());
  EXPECT_DOUBLE_EQ(tpu->forward_ms, tpu_nchw->forward_ms);
}

// nn.GELU and nn.SiLU, written out by the export as five and two ops, are one kernel each in
// eager PyTorch that reads x and writes the result once.
TEST(EstimateTest, EagerRunsGeluAndSiluAsOneKernelEach) {
  Graph g = Parse(R"(graph g {
  input %x: f32[1024,1024]
  init %sqrt2: f32[]
  init %one: f32[]
  init %half: f32[]
  %a: f32[1024,1024] = Div[elementwise](%x, %sqrt2)
  %b: f32[1024,1024] = Erf[elementwise](%a)
  %c: f32[1024,1024] = Add[elementwise](%b, %one)
  %d: f32[1024,1024] = Mul[elementwise](%x, %c)
  %gelu: f32[1024,1024] = Mul[elementwise](%d, %half)
  %s: f32[1024,1024] = Sigmoid[elementwise](%gelu)
  %silu: f32[1024,1024] = Mul[elementwise](%gelu, %s)
  output %silu
})");
  Calibration cal;
  cal.name = "test";
  cal.memory_efficiency = 1.0;
  EstimateOptions o;
  o.precision = Precision::kFp32;
  o.batch = 1024;
  o.runtime = *ParseRuntime("eager");
  o.calibration = &cal;
  const TargetSpec& h100 = T("nvidia-h100");
  auto apart = EstimateStep(g, h100, o);
  ASSERT_TRUE(apart.ok()) << apart.error().message;
  EXPECT_EQ(apart->kernels, 7);
  cal.fused_activations = true;
  auto fused = EstimateStep(g, h100, o);
  EXPECT_EQ(fused->kernels, 2);
  const double tensor = 1024.0 * 1024 * 4;
  EXPECT_NEAR(fused->forward_ms, 2 * (2 * tensor) / (h100.hbm_gbps.value() * 1e9) * 1e3, 1e-9);
}

// A cache of what estimates of one graph share gives the same estimates as deriving it afresh,
// for eager and XLA targets, both precisions, training or not.
TEST(EstimateTest, CacheChangesNothing) {
  Graph g = Parse(R"(graph g {
  input %x: f32[64,4096]
  init %w: f32[4096,4096]
  %y: f32[64,4096] = MatMul[matmul](%x, %w)
  %r: f32[64,4096] = Relu[elementwise](%y)
  output %r
})");
  EstimateCache cache;
  for (const char* target : {"nvidia-h100", "tpu-v5e", "nvidia-h100", "tpu-v5e"}) {
    for (Precision p : {Precision::kBf16, Precision::kFp32}) {
      for (int chips : {1, 8}) {
        EstimateOptions o;
        o.precision = p;
        o.train = chips == 8;
        o.batch = 64;
        o.chips = chips;
        auto fresh = EstimateStep(g, T(target), o);
        o.cache = &cache;
        auto cached = EstimateStep(g, T(target), o);
        ASSERT_TRUE(fresh.ok() && cached.ok());
        EXPECT_DOUBLE_EQ(fresh->step_ms, cached->step_ms) << target;
        EXPECT_DOUBLE_EQ(fresh->memory.total(), cached->memory.total()) << target;
        EXPECT_EQ(fresh->kernels, cached->kernels) << target;
      }
    }
  }
}

// Under XLA the ReLU fuses into the matmul: one kernel, and the matmul's result never goes
// through HBM; eager runs two kernels with a round trip between them.
TEST(EstimateTest, XlaFusesWhatEagerLaunchesOpByOp) {
  Graph g = Parse(R"(graph g {
  input %x: f32[64,4096]
  init %w: f32[4096,4096]
  %y: f32[64,4096] = MatMul[matmul](%x, %w)
  %a: f32[64,4096] = Relu[elementwise](%y)
  %b: f32[64,4096] = Neg[elementwise](%a)
  %c: f32[64,4096] = Exp[elementwise](%b)
  output %c
})");
  EstimateOptions o;
  o.batch = 64;
  o.runtime = *ParseRuntime("eager");
  auto eager = EstimateStep(g, T("nvidia-h100"), o);
  o.runtime = *ParseRuntime("xla");
  auto xla = EstimateStep(g, T("nvidia-h100"), o);
  ASSERT_TRUE(eager.ok() && xla.ok());
  EXPECT_EQ(eager->kernels, 4);
  EXPECT_EQ(xla->kernels, 1);
  EXPECT_EQ(xla->runtime, *ParseRuntime("xla"));
  EXPECT_LT(xla->step_ms, eager->step_ms);
  // A TPU always runs XLA, whatever was asked.
  o.runtime = *ParseRuntime("eager");
  auto tpu = EstimateStep(g, T("tpu-v5e"), o);
  EXPECT_EQ(tpu->runtime, *ParseRuntime("xla"));
  EXPECT_EQ(tpu->kernels, 1);
}

TEST(EstimateTest, MxuPaddingSlowsOddSizes) {
  // A compute-bound matmul with N=1000 is padded to 1024 on the MXU: it takes as long as N=1024.
  Graph odd = Parse(R"(graph g {
  input %x: f32[4096,4096]
  init %w: f32[4096,1000]
  %y: f32[4096,1000] = MatMul[matmul](%x, %w)
  output %y
})");
  Graph even = Parse(R"(graph g {
  input %x: f32[4096,4096]
  init %w: f32[4096,1024]
  %y: f32[4096,1024] = MatMul[matmul](%x, %w)
  output %y
})");
  EstimateOptions o;
  o.batch = 4096;
  const Calibration full = FullOverlap("tpu-v5e");
  o.calibration = &full;
  auto a = EstimateStep(odd, T("tpu-v5e"), o);
  auto b = EstimateStep(even, T("tpu-v5e"), o);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_FALSE(a->top_nodes.empty());
  EXPECT_NEAR(a->top_nodes[0].mxu_utilization, 1000.0 / 1024, 1e-9);
  EXPECT_TRUE(a->top_nodes[0].compute_bound);
  EXPECT_NEAR(a->forward_ms, b->forward_ms, b->forward_ms * 1e-6);
}

// A TPU matmul kernel adds the time of its bytes to its compute time (xla-tpu's
// matrix_memory_overlap 0); the roofline's max hides the shorter of the two. One bf16 matmul of
// 4096 x 4096 by 4096 x 4096 reads two and writes one 4096 x 4096 tensor: 3 x 32 MiB.
TEST(EstimateTest, TpuMatmulKernelsAddTheirMemoryTime) {
  Graph g = SquareMatmul();
  const TargetSpec& v5e = T("tpu-v5e");
  const Calibration& cal = CalibrationFor(v5e, *ParseRuntime("xla"));
  ASSERT_EQ(cal.matrix_memory_overlap, 0);
  const Calibration full = FullOverlap("tpu-v5e");
  EstimateOptions o;
  o.batch = 4096;
  auto sum = EstimateStep(g, v5e, o);
  o.calibration = &full;
  auto max = EstimateStep(g, v5e, o);
  ASSERT_TRUE(sum.ok() && max.ok());
  const double memory_ms =
      3.0 * 4096 * 4096 * 2 / (*v5e.hbm_gbps * 1e9 * cal.memory_efficiency) * 1e3;
  EXPECT_NEAR(sum->forward_ms - max->forward_ms, memory_ms, 1e-6);
}

TEST(EstimateTest, SlicesCountChipsOrCores) {
  EXPECT_EQ(FindSliceTarget("tpu-v5e-8")->chips, 8);
  EXPECT_EQ(FindSliceTarget("tpu-v5p-128")->chips, 64);  // v5p names count TensorCores
  EXPECT_EQ(FindSliceTarget("tpu-v4-8")->chips, 4);
  EXPECT_EQ(FindSliceTarget("nvidia-h100")->chips, 1);
  EXPECT_FALSE(FindSliceTarget("tpu-v5p-3").ok());
  EXPECT_FALSE(FindSliceTarget("tpu-v9-8").ok());
}

// The accelerator names users type in gcloud and on the console are accepted as they are.
TEST(EstimateTest, GoogleCloudAcceleratorNames) {
  struct Case {
    const char* name;
    const char* target;
    int chips;
  };
  for (const Case& c : std::vector<Case>{{"v3-8", "tpu-v3", 4},
                                         {"v2-32", "tpu-v2", 16},
                                         {"v4-32", "tpu-v4", 16},
                                         {"v5litepod-16", "tpu-v5e", 16},
                                         {"v5e-4", "tpu-v5e", 4},
                                         {"v5p-128", "tpu-v5p", 64},
                                         {"v6e-8", "tpu-v6e", 8},
                                         {"TPU-V6E-8", "tpu-v6e", 8},
                                         {"h100-8", "nvidia-h100", 8},
                                         {"b200-16", "nvidia-b200", 16},
                                         {"GB200-72", "nvidia-gb200", 72},
                                         {"gb300-144", "nvidia-gb300", 144},
                                         {"a100-80gb-8", "nvidia-a100-80gb", 8},
                                         {"v100", "nvidia-v100", 1}}) {
    SCOPED_TRACE(c.name);
    auto t = FindSliceTarget(c.name);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->target->name, c.target);
    EXPECT_EQ(t->chips, c.chips);
    EXPECT_EQ(t->name, c.name);  // reports keep the user's spelling
  }
  EXPECT_FALSE(FindSliceTarget("v5litepod-0").ok());
  EXPECT_FALSE(FindSliceTarget("v3-7").ok());  // v3 names count TensorCores, two per chip
}

// The precision users run per target: fp16 autocast on tensor cores where a GPU has no bf16
// (V100), which `--precision bf16` (the default) means there; float16 on a TPU is computed in fp32.
TEST(EstimateTest, Fp16OnTensorCoresAndNotOnTpus) {
  ASSERT_EQ(ParsePrecision("fp16"), Precision::kFp16);
  EXPECT_EQ(NameOf(Precision::kFp16), "fp16");
  Graph g = SquareMatmul();
  const Calibration tpu = FullOverlap("tpu-v5e");  // the rates alone
  Calibration gpu = CalibrationFor(T("nvidia-v100"), *ParseRuntime("eager"));
  gpu.matrix_memory_overlap = 1;
  auto step_ms = [&](const char* target, Precision p) {
    EstimateOptions o;
    o.batch = 4096;
    o.precision = p;
    o.calibration = T(target).is_tpu() ? &tpu : &gpu;
    auto e = EstimateStep(g, **FindTarget(target), o);
    EXPECT_TRUE(e.ok());
    return e.ok() ? e->forward_ms : 0.0;
  };
  // V100: 125 TFLOP/s fp16 tensor cores against 15.7 fp32 — the default runs at the fp16 rate.
  EXPECT_NEAR(step_ms("nvidia-v100", Precision::kFp32) / step_ms("nvidia-v100", Precision::kBf16),
              125 / 15.7, 0.5);
  EXPECT_DOUBLE_EQ(step_ms("nvidia-v100", Precision::kFp16),
                   step_ms("nvidia-v100", Precision::kBf16));
  // A TPU has no fp16 unit: it runs fp16 matmuls as fp32 ones (one bf16 pass at XLA's DEFAULT
  // precision), no faster than bf16.
  EXPECT_DOUBLE_EQ(step_ms("tpu-v5e", Precision::kFp16), step_ms("tpu-v5e", Precision::kFp32));
  EXPECT_GE(step_ms("tpu-v5e", Precision::kFp16), step_ms("tpu-v5e", Precision::kBf16));
}

// A v3 slice's gradient all-reduce costs ICI time (it was 0 ms: no ICI figure for v3); v2's
// interconnect is not known, which the assumptions say instead of pricing it at zero silently.
TEST(EstimateTest, AllReduceOnV2AndV3Slices) {
  Graph g = Parse(R"(graph g {
  input %x: f32[8,4096]
  init %w: f32[4096,4096]
  %y: f32[8,4096] = MatMul[matmul](%x, %w)
  output %y
})");
  EstimateOptions o;
  o.batch = 8;
  o.train = true;
  o.chips = 4;  // v3-8: 8 devices (TensorCores), 8 samples each
  auto v3 = EstimateStep(g, **FindTarget("tpu-v3"), o);
  auto v2 = EstimateStep(g, **FindTarget("tpu-v2"), o);
  ASSERT_TRUE(v3.ok() && v2.ok());
  // Ring all-reduce of 64 MiB of fp32 gradients over the 8 devices: 2 * 7/8 * 64 MiB at 400 GB/s
  // one way.
  EXPECT_NEAR(v3->allreduce_ms, 2.0 * 7 / 8 * 4096 * 4096 * 4 / 400e9 * 1e3, 1e-6);
  EXPECT_EQ(v3->global_batch, 64);
  EXPECT_EQ(v3->parallel.data, 8);
  EXPECT_EQ(v2->allreduce_ms, 0);
  bool said = false;
  for (const std::string& a : v2->assumptions) said |= a.find("not known") != std::string::npos;
  EXPECT_TRUE(said);
}

// --price replaces the list price; the cost figures follow it.
TEST(EstimateTest, PriceOverride) {
  Graph g = Parse(R"(graph g {
  input %x: f32[8,1024]
  init %w: f32[1024,1024]
  %y: f32[8,1024] = MatMul[matmul](%x, %w)
  output %y
})");
  EstimateOptions o;
  o.batch = 8;
  o.chips = 8;
  auto list = EstimateStep(g, **FindTarget("tpu-v5e"), o);
  o.usd_per_chip_hour = 0.6;
  auto committed = EstimateStep(g, **FindTarget("tpu-v5e"), o);
  ASSERT_TRUE(list.ok() && committed.ok());
  EXPECT_DOUBLE_EQ(*list->usd_per_hour, 1.2 * 8);
  EXPECT_DOUBLE_EQ(*committed->usd_per_hour, 0.6 * 8);
  EXPECT_NEAR(*committed->usd_per_million_samples, *list->usd_per_million_samples / 2, 1e-9);
}

// One projection of 4,096 tokens and a 16-head attention over it: 4 x 4096^2 x 2048 attention
// FLOPs.
Graph ProjectionAndAttention() {
  return testing::ParseOrDie(R"(graph g {
  input %x: f32[1,4096,2048]
  init %wq: f32[2048,2048]
  %q: f32[1,4096,2048] = MatMul[matmul](%x, %wq)
  %a: f32[1,4096,2048] = Attention[matmul](%q, %q, %q) {q_num_heads=16, kv_num_heads=16}
  output %a
})");
}

// --attention-kernel runs the attention at the share of the peak the target lists for that
// kernel (an A100's FlashAttention (1): 0.325, FlashAttention-2: 0.615, of 312 TFLOP/s), the
// other matmuls as before; a kernel the target does not list, and any on a TPU, is refused.
TEST(EstimateTest, AnAttentionKernelRunsAtItsTargetsPublishedShare) {
  Graph g = ProjectionAndAttention();
  Calibration cal = CalibrationFor(T("nvidia-a100"), *ParseRuntime("eager"));
  cal.matrix_memory_overlap = 1;
  cal.kernel_overhead_us = 0;
  auto times = [&](const std::string& kernel) {
    EstimateOptions o;
    o.calibration = &cal;
    o.attention_kernel = kernel;
    auto e = EstimateStep(g, T("nvidia-a100"), o);
    EXPECT_TRUE(e);
    std::map<std::string, double> ms;
    for (const NodeTime& t : e->top_nodes) ms[t.op] = t.ms;
    return ms;
  };
  const double flops = 4.0 * 4096 * 4096 * 2048;
  const auto fa1 = times("flash-attention-1");
  const auto fa2 = times("flash-attention-2");
  EXPECT_NEAR(fa1.at("Attention"), flops / (312e12 * 0.325) * 1e3, 1e-6);
  EXPECT_NEAR(fa2.at("Attention"), flops / (312e12 * 0.615) * 1e3, 1e-6);
  EXPECT_DOUBLE_EQ(fa1.at("MatMul"), times("").at("MatMul"));
  EstimateOptions o;
  o.attention_kernel = "flash-attention-3";
  auto hopper_only = EstimateStep(g, T("nvidia-a100"), o);
  ASSERT_FALSE(hopper_only);
  EXPECT_NE(hopper_only.error().message.find("flash-attention-1, flash-attention-2"),
            std::string::npos);
  o.attention_kernel = "cudnn";
  EXPECT_FALSE(EstimateStep(g, T("tpu-v5p"), o));
  EXPECT_TRUE(EstimateStep(g, T("nvidia-h100"), o));
}

}  // namespace
}  // namespace tpudoctor

namespace tpudoctor {
namespace {

// A TPU generation with fitted runs uses its own factors; one without borrows each factor from
// its nearest sibling that has one, and says so; GPUs and unfitted factors keep the family's.
TEST(Calibrations, GenerationsOwnOrBorrowTheirNearestSiblingsFactors) {
  const Runtime xla = *ParseRuntime("xla");
  const Calibration family =
      *ParseCalibration(*FindEmbedded("data/calibration/xla-tpu.json"), "xla-tpu");
  const Calibration& v6e = CalibrationFor(T("tpu-v6e"), xla);
  EXPECT_EQ(v6e.fitted_for, "tpu-v6e");
  EXPECT_NE(v6e.matrix_efficiency, family.matrix_efficiency);
  // XLA:TPU's convolutions run on the MXU as its dot products do: no factor of their own.
  EXPECT_FALSE(family.conv_efficiency);
  EXPECT_EQ(v6e.ConvEfficiency(), v6e.matrix_efficiency);
  // v4 has fitted runs of its own (MaxText's 22B and 52B tables).
  EXPECT_EQ(CalibrationFor(T("tpu-v4"), xla).fitted_for, "tpu-v4");
  // v3 has only convolutional runs, which fit nothing: its matmul factor, which its convolutions
  // take too, comes from its nearest sibling with one, v5p, and it says so.
  ASSERT_EQ(T("tpu-v3").calibration_siblings.at(0), "tpu-v5p");
  const Calibration& v3 = CalibrationFor(T("tpu-v3"), xla);
  EXPECT_EQ(v3.matrix_efficiency, CalibrationFor(T("tpu-v5p"), xla).matrix_efficiency);
  EXPECT_NE(v3.source.find("its nearest sibling's"), std::string::npos);
  // v2's nearest sibling, v3, has no fitted factor either: its matmul factor comes from the next
  // one that has one, v5p.
  const Calibration& v2 = CalibrationFor(T("tpu-v2"), xla);
  EXPECT_EQ(v2.matrix_efficiency, CalibrationFor(T("tpu-v5p"), xla).matrix_efficiency);
  EXPECT_NE(v2.source.find("tpu-v2 has none: its nearest sibling's"), std::string::npos);
  EXPECT_EQ(CalibrationFor(T("nvidia-h100"), xla).fitted_for, "");
  EXPECT_EQ(CalibrationFor(T("nvidia-h100"), xla).name, "xla-gpu");
  // GPUs: the eager family is the H100's measured ceiling; the B200 has a matmul factor fitted
  // to its published runs (bench/gpu_calibration_fit.py), which the GB200, its sibling with none
  // fitted, takes and says so; other factors stay the family's.
  const Runtime eager = *ParseRuntime("eager");
  const Calibration& h100 = CalibrationFor(T("nvidia-h100"), eager);
  const Calibration& b200 = CalibrationFor(T("nvidia-b200"), eager);
  const Calibration& gb200 = CalibrationFor(T("nvidia-gb200"), eager);
  EXPECT_EQ(h100.fitted_for, "");
  EXPECT_EQ(b200.fitted_for, "nvidia-b200");
  EXPECT_LT(b200.matrix_efficiency, h100.matrix_efficiency);
  EXPECT_EQ(b200.memory_efficiency, h100.memory_efficiency);
  EXPECT_EQ(gb200.matrix_efficiency, b200.matrix_efficiency);
  EXPECT_NE(gb200.source.find("nvidia-gb200 has none: its nearest sibling's"), std::string::npos);
  // The GB300's nearest sibling, the GB200, has no fitted factor either: the next one's, the
  // B200's.
  EXPECT_EQ(CalibrationFor(T("nvidia-gb300"), eager).matrix_efficiency, b200.matrix_efficiency);
}

TEST(Runtimes, EveryExecutionModelHasItsCalibrations) {
  ASSERT_GE(ExecutionModels().size(), 3u);
  std::map<std::string, int> defaults;
  for (const ExecutionModel& m : ExecutionModels()) {
    SCOPED_TRACE(m.name);
    EXPECT_EQ(NameOf(*ParseRuntime(m.name)), m.name);
    EXPECT_FALSE(m.description.empty());
    // A GPU calibration for every model; the TPU runs XLA only.
    EXPECT_TRUE(FindEmbedded("data/calibration/" + m.name + "-gpu.json")) << "no GPU calibration";
    for (const std::string& d : m.default_for) ++defaults[d];
  }
  // `auto` resolves to exactly one model for each case.
  EXPECT_EQ(defaults, (std::map<std::string, int>{
                          {"gpu", 1}, {"gpu_serving", 1}, {"tpu", 1}, {"xla_program", 1}}));
  EXPECT_TRUE(FindEmbedded("data/calibration/xla-tpu.json"));
  EXPECT_TRUE(ParseRuntime("auto")->is_auto());
  EXPECT_FALSE(ParseRuntime("jit"));
  EXPECT_EQ(RuntimeChoices(), "auto, eager, xla or compiled");
}

}  // namespace
}  // namespace tpudoctor

namespace tpudoctor {
namespace {

TEST(OpCostTest, PoolsCountTheirWindowWhateverTheSpelling) {
  Graph g = Parse(R"(graph g {
  input %x: f32[1,8,32,32]
  input %h: f32[1,32,32,8]
  input %zero: f32[]
  %p: f32[1,8,16,16] = MaxPool[pool](%x) {kernel_shape=[2, 2]}
  %r: f32[1,16,16,8] = "hlo::reduce-window"[pool](%h, %zero) {window="{size=1x2x2x1 stride=1x2x2x1}"}
  output %p
  output %r
})");
  const std::vector<OpCost> costs = ComputeOpCosts(g);
  EXPECT_DOUBLE_EQ(costs[0].flops, 8.0 * 16 * 16 * 4);  // output elements x window
  EXPECT_DOUBLE_EQ(costs[1].flops, costs[0].flops);
}

}  // namespace
}  // namespace tpudoctor

namespace tpudoctor {
namespace {

// MFU is the useful FLOPs over the peak of the precision the matmuls run at: a V100 (no bf16)
// runs mixed precision on its fp16 tensor cores (125 TFLOP/s), not at its fp32 15.7.
TEST(EstimateTest, MfuIsAgainstThePeakOfThePrecisionUsed) {
  Graph g = SquareMatmul();
  EstimateOptions o;
  o.runtime = *ParseRuntime("eager");
  auto e = EstimateStep(g, T("nvidia-v100"), o);
  ASSERT_TRUE(e);
  EXPECT_NEAR(e->mfu, 2.0 * 4096 * 4096 * 4096 / (e->step_ms / 1e3) / 125e12, 1e-9);
  EXPECT_LT(e->mfu, 1);
}

// The memory sizes a GPU is sold in are targets of their own; a GPU price that leaves out the
// host VM says so; collectives are named by the links they cross.
TEST(EstimateTest, GpuVariantsHostPricesAndFabrics) {
  EXPECT_EQ(*T("nvidia-v100").hbm_gib, 16);
  EXPECT_EQ(*T("nvidia-v100-32gb").hbm_gib, 32);
  EXPECT_EQ(*T("nvidia-a100-80gb").hbm_gib, 80);
  EXPECT_EQ(T("nvidia-a100-80gb").bf16_tflops, T("nvidia-a100").bf16_tflops);
  EXPECT_TRUE(FindSliceTarget("a100-80gb-8").ok());
  EXPECT_FALSE(T("nvidia-v100").price_includes_host);
  EXPECT_TRUE(T("tpu-v6e").price_includes_host);
  EXPECT_EQ(T("tpu-v6e").Interconnect(256), "ICI");
  EXPECT_EQ(T("nvidia-h100").Interconnect(8), "NVLink");
  EXPECT_NE(T("nvidia-h100").Interconnect(16).find("InfiniBand"), std::string::npos);
}

}  // namespace
}  // namespace tpudoctor

namespace tpudoctor {
namespace {

// A local attention (window w) over s causal queries attends to w*s - w^2/2 (query, key) pairs
// instead of half of s^2: QK^T and PV, 2 FLOPs per multiply-add, head_dim 16, 4 heads.
TEST(OpCostTest, SlidingWindowAttentionCountsThePairsInTheWindow) {
  auto flops = [](int window) {
    Graph g = testing::ParseOrDie((std::string(R"(graph g {
  input %q: f32[1,64,64]
  input %k: f32[1,64,32]
  input %v: f32[1,64,32]
  %a: f32[1,64,64] = Attention[matmul](%q, %k, %v) {is_causal=1, q_num_heads=4, kv_num_heads=2)") +
                                   (window > 0 ? ", window=" + std::to_string(window) : "") +
                                   R"(}
  output %a
})")
                                      .c_str());
    return ComputeOpCosts(g)[0].flops;
  };
  const double pairs = 16.0 * 64 - 16.0 * 16 / 2;
  EXPECT_DOUBLE_EQ(flops(16), 2 * 4 * 2 * pairs * 16);
  EXPECT_DOUBLE_EQ(flops(0), 2 * 4 * 2 * (64.0 * 64 / 2) * 16);
  EXPECT_DOUBLE_EQ(flops(64), flops(0));  // a window as long as the sequence is no window
}

}  // namespace
}  // namespace tpudoctor

namespace tpudoctor {
namespace {

// fp8 matmuls run at the chip's fp8 peak where it has one (TPU7x: twice bf16), at the 16-bit
// rate where it has none; everything else is costed as bf16.
TEST(EstimateTest, Fp8MatmulsAtTheFp8RateWhereTheChipHasOne) {
  Graph g = testing::ParseOrDie(R"(graph g {
  input %x: f32[8192,8192]
  init %w: f32[8192,8192]
  %y: f32[8192,8192] = MatMul[matmul](%x, %w)
  output %y
})");
  auto compute_ms = [&](const char* target, Precision p) {
    EstimateOptions o;
    o.precision = p;
    auto e = EstimateStep(g, T(target), o);
    EXPECT_TRUE(e);
    return e ? e->components.matrix_peak_flops : 0.0;
  };
  // TPU7x: twice bf16's peak, times the share a whole fp8 training step reaches
  // (data/targets/tpu-7x.json: 0.90, fitted to tpu-recipes' Llama 3.1 70B fp8 row).
  EXPECT_DOUBLE_EQ(compute_ms("tpu-7x", Precision::kFp8),
                   2 * 0.90 * compute_ms("tpu-7x", Precision::kBf16));
  EXPECT_DOUBLE_EQ(compute_ms("tpu-v5e", Precision::kFp8), compute_ms("tpu-v5e", Precision::kBf16));
  // Hopper's fp8 matmuls reach 0.87 of the share of their peak that bf16 ones reach of theirs
  // (measured: data/targets/nvidia-h100.json): their rate is 0.87 x the fp8 peak.
  EXPECT_DOUBLE_EQ(T("nvidia-h100").fp8_matmul_share.value_or(1), 0.87);
  EXPECT_DOUBLE_EQ(compute_ms("nvidia-h100", Precision::kFp8), 1979e12 * 0.87);
  EXPECT_DOUBLE_EQ(compute_ms("nvidia-h100", Precision::kBf16), 989e12);
  // MFU against the fp8 datasheet peak (1,979 TFLOP/s), not the 0.87 of it the matmuls reach.
  EstimateOptions fp8;
  fp8.precision = Precision::kFp8;
  auto e = EstimateStep(g, T("nvidia-h100"), fp8);
  ASSERT_TRUE(e);
  EXPECT_NEAR(e->mfu, e->model_flops / (e->step_ms / 1e3 * 1979e12), 1e-12);
  EXPECT_EQ(*ParsePrecision("fp8"), Precision::kFp8);
  EXPECT_EQ(PrecisionChoices(), "fp32, bf16, fp16, fp8, int8, int8w, mixed or bf16-params");
}

// Under fp8, Transformer Engine keeps a weight matmul's input for the weight gradient as the fp8
// copy it cast for the forward GEMM: one byte an element where bf16 keeps two. Two weight matmuls
// over 64 rows (inputs 64 x 128 and 64 x 256) keep 24,576 bytes less; the ReLU between them keeps
// its bf16 input either way, and an attention-like product of two activations (no weight) keeps
// its bf16 inputs. XLA on a TPU keeps bf16 inputs (no such calibration).
TEST(EstimateTest, Fp8KeepsWeightMatmulInputsAsTheirFp8Copy) {
  Graph g = testing::ParseOrDie(R"(graph g {
  input %x: f32[64,128]
  input %k: f32[128,64]
  init %w1: f32[128,256]
  init %w2: f32[256,32]
  %y: f32[64,256] = MatMul[matmul](%x, %w1)
  %r: f32[64,256] = Relu[elementwise](%y)
  %z: f32[64,32] = MatMul[matmul](%r, %w2)
  %s: f32[64,64] = MatMul[matmul](%z, %k)
  output %s
})");
  auto saved = [&](const char* target, Precision p) {
    EstimateOptions o;
    o.train = true;
    o.precision = p;
    auto e = EstimateStep(g, T(target), o);
    EXPECT_TRUE(e) << (e ? "" : e.error().message);
    return e ? e->components.saved_bytes : 0.0;
  };
  EXPECT_DOUBLE_EQ(saved("nvidia-h100", Precision::kBf16) - saved("nvidia-h100", Precision::kFp8),
                   64 * 128 + 64 * 256);
  EXPECT_DOUBLE_EQ(saved("tpu-v5e", Precision::kBf16), saved("tpu-v5e", Precision::kFp8));
}

// fp8 recipes quantize the weight matmuls, not the attention kernel: on TPU7x an attention op
// takes as long in an fp8 step as in a bf16 one, a projection about half as long.
TEST(EstimateTest, Fp8LeavesAttentionAtTheBf16Rate) {
  Graph g = testing::ParseOrDie(R"(graph g {
  input %x: f32[1,4096,2048]
  init %wq: f32[2048,2048]
  %q: f32[1,4096,2048] = MatMul[matmul](%x, %wq)
  %a: f32[1,4096,2048] = Attention[matmul](%q, %q, %q) {q_num_heads=16, kv_num_heads=16, is_causal=1}
  output %a
})");
  auto op_ms = [&](Precision p, const char* op) {
    EstimateOptions o;
    o.precision = p;
    auto e = EstimateStep(g, T("tpu-7x"), o);
    EXPECT_TRUE(e);
    for (const NodeTime& t : e->top_nodes) {
      if (t.op == op) return t.ms;
    }
    return 0.0;
  };
  ASSERT_GT(op_ms(Precision::kBf16, "Attention"), 0);
  EXPECT_DOUBLE_EQ(op_ms(Precision::kFp8, "Attention"), op_ms(Precision::kBf16, "Attention"));
  EXPECT_LT(op_ms(Precision::kFp8, "MatMul"), 0.75 * op_ms(Precision::kBf16, "MatMul"));
}

// AQT int8 (MaxText's quantization=int8) runs the weight matmuls at the target's share of the
// chip's int8 peak where that beats the 16-bit one (v5p: 0.74 x 918 against 459), at the 16-bit
// rate where it does not (v4's int8
// equals its bf16; TPU7x lists none). Each operand's scale is computed from it every step: one
// more read of both 4096 x 4096 bf16 operands (2 x 32 MiB) on top of the matmul's own bytes.
TEST(EstimateTest, Int8MatmulsAtTheInt8RateWithTheirScalesRead) {
  Graph g = SquareMatmul();
  auto step = [&](const char* target, Precision p) {
    EstimateOptions o;
    o.batch = 4096;
    o.precision = p;
    auto e = EstimateStep(g, T(target), o);
    EXPECT_TRUE(e) << (e ? "" : e.error().message);
    return e ? *e : Estimate{};
  };
  // AQT's int8 matmuls reach 0.74 of the int8 peak for bf16's share of the bf16 one
  // (int8_matmul_share, from Trillium's pair of GPT-3 runs, carried to v5p).
  EXPECT_DOUBLE_EQ(T("tpu-v5p").int8_matmul_share.value_or(1), 0.74);
  EXPECT_DOUBLE_EQ(step("tpu-v5p", Precision::kInt8).components.matrix_peak_flops, 918e12 * 0.74);
  // MFU against the int8 datasheet peak, not the share of it the matmuls reach.
  const Estimate int8 = step("tpu-v5p", Precision::kInt8);
  EXPECT_NEAR(int8.mfu, int8.model_flops / (int8.step_ms / 1e3 * 918e12), 1e-12);
  EXPECT_DOUBLE_EQ(step("tpu-v5p", Precision::kBf16).components.matrix_peak_flops, 459e12);
  EXPECT_DOUBLE_EQ(step("tpu-v4", Precision::kInt8).components.matrix_peak_flops, 275e12);
  EXPECT_DOUBLE_EQ(step("tpu-7x", Precision::kInt8).components.matrix_peak_flops,
                   step("tpu-7x", Precision::kBf16).components.matrix_peak_flops);
  const TargetSpec& v5p = T("tpu-v5p");
  const Calibration& cal = CalibrationFor(v5p, *ParseRuntime("xla"));
  const double flops = 2.0 * 4096 * 4096 * 4096;
  const double compute_saved_ms =
      flops / cal.matrix_efficiency * (1 / 459e12 - 1 / (918e12 * 0.74)) * 1e3;
  const double scale_ms =
      2.0 * 4096 * 4096 * 2 / (*v5p.hbm_gbps * 1e9 * cal.memory_efficiency) * 1e3;
  EXPECT_NEAR(step("tpu-v5p", Precision::kInt8).forward_ms,
              step("tpu-v5p", Precision::kBf16).forward_ms - compute_saved_ms + scale_ms, 1e-9);
  EXPECT_EQ(*ParsePrecision("int8"), Precision::kInt8);
}

// Attention runs at the calibration's attention efficiency (published fused-kernel rates), the
// other matmuls at the matmul efficiency; training, its backward is 2.5x its forward (the scores
// recomputed: five matmuls against two), a matmul's 2x.
TEST(EstimateTest, AttentionHasItsOwnEfficiencyAndBackward) {
  Graph g = ProjectionAndAttention();
  Calibration cal = CalibrationFor(T("nvidia-h100"), *ParseRuntime("eager"));
  cal.matrix_memory_overlap = 1;
  cal.kernel_overhead_us = 0;
  auto times = [&](std::optional<double> attention_eff, bool train) {
    cal.attention_efficiency = attention_eff;
    EstimateOptions o;
    o.train = train;
    o.calibration = &cal;
    auto e = EstimateStep(g, T("nvidia-h100"), o);
    EXPECT_TRUE(e);
    std::map<std::string, double> ms;
    for (const NodeTime& t : e->top_nodes) ms[t.op] = t.ms;
    return ms;
  };
  const auto same = times(std::nullopt, false);
  const auto half = times(cal.matrix_efficiency / 2, false);
  // 4 x 4096^2 x 2048 FLOPs at 989 TFLOP/s x the efficiency: compute-bound.
  EXPECT_NEAR(same.at("Attention"),
              4.0 * 4096 * 4096 * 2048 / (989e12 * cal.matrix_efficiency) * 1e3, 1e-6);
  EXPECT_NEAR(half.at("Attention"), 2 * same.at("Attention"), 1e-9);
  EXPECT_DOUBLE_EQ(half.at("MatMul"), same.at("MatMul"));
  const auto trained = times(std::nullopt, true);
  EXPECT_NEAR(trained.at("Attention"), 3.5 * same.at("Attention"), 1e-9);
}

}  // namespace
}  // namespace tpudoctor

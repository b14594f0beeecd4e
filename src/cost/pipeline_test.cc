// Micro-batches, pipeline parallelism, the distributed optimizer and collectives that cross
// hosts, each checked by hand against a step without them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "src/cost/sharding.h"
#include "tests/test_util.h"
#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {
namespace {

// A training step of Llama 3.1 8B (32 layers) at 2048 tokens, one sequence per micro-batch.
Estimate Llama8b(const char* target, int chips, const char* parallel, int micro_batches,
                 bool distributed_optimizer = false, Precision precision = Precision::kBf16) {
  ShapeOptions so;
  so.batch = 1;
  so.dims["seq"] = 2048;
  auto src = ReadSource((testing::SourceDir() / "examples/configs/llama-3.1-8b.json").string());
  auto m = LoadModel(*src, so);
  EXPECT_TRUE(m);
  if (!m) return {};
  EstimateOptions o;
  o.train = true;
  o.batch = 1;
  o.chips = chips;
  o.parallel = *ParseParallelism(parallel);
  o.micro_batches = micro_batches;
  o.distributed_optimizer = distributed_optimizer;
  o.precision = precision;
  auto e = EstimateStep(m->graph, **FindTarget(target), o);
  EXPECT_TRUE(e) << (e ? "" : e.error().message);
  return e ? *e : Estimate{};
}

// Gradient accumulation: the layers' work runs once per micro-batch, the update and the gradient
// all-reduce once a step, and the global batch counts every micro-batch.
TEST(MicroBatchTest, WorkRunsPerMicroBatchTheUpdateOnce) {
  const Estimate one = Llama8b("tpu-v5p", 4, "data=4", 1);
  const Estimate four = Llama8b("tpu-v5p", 4, "data=4", 4);
  EXPECT_EQ(one.global_batch, 4);
  EXPECT_EQ(four.global_batch, 16);
  EXPECT_EQ(four.micro_batches, 4);
  EXPECT_NEAR(four.forward_ms, 4 * one.forward_ms, 1e-9);
  EXPECT_NEAR(four.backward_ms, 4 * one.backward_ms, 1e-9);
  EXPECT_DOUBLE_EQ(four.optimizer_ms, one.optimizer_ms);
  EXPECT_DOUBLE_EQ(four.allreduce_ms, one.allreduce_ms);
  EXPECT_NEAR(four.step_ms - one.step_ms, 3 * (one.forward_ms + one.backward_ms), 1e-6);
  // Memory holds one micro-batch.
  EXPECT_DOUBLE_EQ(four.memory.activations, one.memory.activations);
}

// Two pipeline stages on 8 chips: each holds half the layers' weights and the ones outside the
// layers (embedding, output head); a micro-batch's work on the slowest stage is half the layers'
// plus the rest; the bubble is (stages - 1) / chunks of those slots; the replicas are 4.
TEST(PipelineTest, StagesDivideTheLayersAndIdleInTheBubble) {
  const Estimate flat = Llama8b("tpu-v5p", 8, "data=8", 8);
  const Estimate piped = Llama8b("tpu-v5p", 8, "data=4,pp=2", 8);
  const Estimate interleaved = Llama8b("tpu-v5p", 8, "data=4,pp=2,vp=4", 8);
  EXPECT_EQ(flat.global_batch, 64);
  EXPECT_EQ(piped.global_batch, 32);
  // Llama 3.1 8B: 6.98B parameters in its 32 layers, 2 x 128256 x 4096 = 1.05B outside them.
  const double outside = 2.0 * 128256 * 4096;
  const double total = flat.memory.weights / 4;  // fp32 weights
  const double layered = total - outside;
  EXPECT_NEAR(piped.memory.weights / 4, layered / 2 + outside, 1e-3 * total);
  // The slowest stage's micro-batch: its half of the layers and everything outside them.
  EXPECT_LT(piped.forward_ms, flat.forward_ms);
  EXPECT_GT(piped.forward_ms, flat.forward_ms / 2);
  const double slot = (piped.forward_ms + piped.backward_ms) / 8 + piped.pipeline_send_ms / 8;
  EXPECT_NEAR(piped.pipeline_bubble_ms, 1.0 * slot, 1e-6 * slot);
  // Interleaving four chunks a stage quarters the bubble; its sends overlap compute.
  const double interleaved_slot = (interleaved.forward_ms + interleaved.backward_ms) / 8;
  EXPECT_NEAR(interleaved.pipeline_bubble_ms, interleaved_slot / 4, 1e-6 * interleaved_slot);
  EXPECT_NEAR(interleaved.pipeline_send_ms, 4 * piped.pipeline_send_ms, 1e-9);
  // The first stage keeps two micro-batches of its half of the layers (1F1B: one per stage),
  // 2 x (1 + 1/8) with four chunks: more than one micro-batch's whole model only when
  // interleaved.
  EXPECT_GT(interleaved.memory.activations, piped.memory.activations);
}

TEST(PipelineTest, MoreChunksThanLayersIsAnError) {
  ShapeOptions so;
  so.batch = 1;
  so.dims["seq"] = 128;
  auto src = ReadSource((testing::SourceDir() / "examples/configs/llama-3.1-8b.json").string());
  auto m = LoadModel(*src, so);
  ASSERT_TRUE(m);
  EstimateOptions o;
  o.train = true;
  o.chips = 8;
  o.parallel = *ParseParallelism("pp=8,vp=8");  // 64 chunks of 32 layers
  auto e = EstimateStep(m->graph, **FindTarget("tpu-v5p"), o);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("32 layers"), std::string::npos) << e.error().message;
  o.parallel = *ParseParallelism("pp=2");
  o.micro_batches = 0;
  EXPECT_FALSE(EstimateStep(m->graph, **FindTarget("tpu-v5p"), o));
  // A global batch an int64 would not hold (1e9 x 2^20 x 8 devices) is refused, not wrapped.
  o.micro_batches = 1 << 20;
  o.batch = 1000000000;
  auto huge = EstimateStep(m->graph, **FindTarget("tpu-v5p"), o);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("1e15"), std::string::npos);
}

// Megatron's distributed optimizer over 4 data replicas: bf16 weights and gradients whole, the
// fp32 master weights and Adam's two moments divided by 4; the bf16 gradients reduce-scattered
// and the bf16 weights all-gathered: 4 bytes a parameter where an all-reduce of fp32 gradients
// moves 8.
TEST(DistributedOptimizerTest, ShardsTheOptimizerOverTheReplicas) {
  const Estimate ddp = Llama8b("tpu-v5p", 4, "data=4", 1);
  const Estimate zero1 = Llama8b("tpu-v5p", 4, "data=4", 1, true);
  const double params = ddp.memory.weights / 4;
  EXPECT_NEAR(zero1.memory.weights, 2 * params, 1e-6 * params);
  EXPECT_NEAR(zero1.memory.gradients, 2 * params, 1e-6 * params);
  EXPECT_NEAR(zero1.memory.master_weights, 4 * params / 4, 1e-6 * params);
  EXPECT_NEAR(zero1.memory.optimizer_state, 8 * params / 4, 1e-6 * params);
  EXPECT_NEAR(zero1.allreduce_ms, ddp.allreduce_ms * 4 / 8, 1e-9);
  EXPECT_NEAR(zero1.optimizer_ms, ddp.optimizer_ms / 4, 1e-9);
}

// Megatron's FP8 recipes keep the weights in fp8 (fp8_param_gather): the distributed optimizer
// all-gathers 1 byte a parameter beside the 2 of each bf16 gradient it reduce-scatters, 3 where
// bf16 weights make 4, and a replica holds its weights at 1 byte.
TEST(DistributedOptimizerTest, Fp8RecipesGatherFp8Weights) {
  const Estimate bf16 = Llama8b("nvidia-h100", 8, "data=8", 1, true);
  const Estimate fp8 = Llama8b("nvidia-h100", 8, "data=8", 1, true, Precision::kFp8);
  EXPECT_NEAR(fp8.allreduce_ms, bf16.allreduce_ms * 3 / 4, 1e-9);
  EXPECT_NEAR(fp8.memory.weights, bf16.memory.weights / 2, 1e-6 * bf16.memory.weights);
  EXPECT_DOUBLE_EQ(fp8.memory.gradients, bf16.memory.gradients);
}

// Under the distributed optimizer a context group keeps whole weights (Megatron), so with no
// other axis nothing is divided: the parallelism line says the weights and gradients are whole
// on every chip, not "divided over 1 chips", and leaves the optimizer state to its own line; with
// tensor parallelism they are divided over its 8 chips.
TEST(DistributedOptimizerTest, SaysWhatIsWholeAndWhatIsDivided) {
  const auto line = [](const Estimate& e) {
    const auto it =
        std::find_if(e.assumptions.begin(), e.assumptions.end(),
                     [](const std::string& a) { return a.rfind("parallelism ", 0) == 0; });
    return it == e.assumptions.end() ? std::string() : *it;
  };
  const std::string cp = line(Llama8b("nvidia-h100", 16, "cp=2", 1, true));
  EXPECT_NE(cp.find("parameters and gradients whole on every chip"), std::string::npos) << cp;
  EXPECT_EQ(cp.find("divided over 1 chips"), std::string::npos) << cp;
  const std::string tp = line(Llama8b("nvidia-h100", 16, "tp=8", 1, true));
  EXPECT_NE(tp.find("parameters and gradients divided over 8 chips"), std::string::npos) << tp;
  const std::string fsdp = line(Llama8b("nvidia-h100", 8, "fsdp=8", 1));
  EXPECT_NE(fsdp.find("parameters, gradients and optimizer state divided over 8 chips"),
            std::string::npos)
      << fsdp;
}

// Multislice is a TPU's: a GPU on several hosts is a target of that many GPUs, so --slices on a
// GPU is refused rather than priced with no network between the "slices".
TEST(ScaleOutTest, SlicesAreRefusedOnAGpu) {
  ShapeOptions so;
  so.batch = 1;
  so.dims["seq"] = 128;
  auto src = ReadSource((testing::SourceDir() / "examples/configs/gpt2.json").string());
  ASSERT_TRUE(src);
  auto m = LoadModel(*src, so);
  ASSERT_TRUE(m);
  EstimateOptions o;
  o.train = true;
  o.batch = 1;
  o.slices = 2;
  auto gpu = EstimateStep(m->graph, **FindTarget("nvidia-h100"), o);
  ASSERT_FALSE(gpu);
  EXPECT_NE(gpu.error().message.find("TPU slices"), std::string::npos) << gpu.error().message;
  EXPECT_TRUE(EstimateStep(m->graph, **FindTarget("tpu-v5p"), o));
}

// On GPUs a group that spans hosts runs at the scale-out network's bandwidth: 16 H100s data
// parallel cross two hosts (50 GB/s a GPU), 8 stay on NVLink (half of 900 GB/s).
TEST(ScaleOutTest, GroupsSpanningHostsRunAtTheNetworksBandwidth) {
  CollectiveInputs in;
  in.parallel = {16, 1, 1};
  in.param_count = 1e9;
  in.link_bytes_s = 450e9;
  in.scaleout_bytes_s = 50e9;
  in.devices_per_host = 8;
  in.train = true;
  // All-reduce of 1e9 fp32 gradients over 16: 2 x 15/16 x 4 GB at 50 GB/s.
  EXPECT_NEAR(Collectives(in).data_s, 2 * 15.0 / 16 * 4e9 / 50e9, 1e-12);
  in.parallel = {2, 1, 8};  // tensor parallel within each host, data parallel across them
  in.tensor_allreduce_bytes = 1e9;
  const CollectiveTimes t = Collectives(in);
  EXPECT_NEAR(t.tensor_s, 2 * 7.0 / 8 * 1e9 / 450e9, 1e-12);
  EXPECT_NEAR(t.data_s, 2 * 0.5 * 1e9 / 8 * 4 / 50e9, 1e-12);
  // Expert parallelism over 16 devices of two hosts: half of each device's tokens go to the
  // other host over the network, 7/16 to its own host's peers over NVLink at the same time.
  in.parallel = {1, 1, 1};
  in.parallel.expert = 16;
  in.expert_exchange_bytes = 1e9;
  in.passes = 2;
  EXPECT_NEAR(Collectives(in).expert_s, 2 * 0.5 * 1e9 / 50e9, 1e-12);
  in.parallel.expert = 8;  // one host: 7/8 over NVLink
  EXPECT_NEAR(Collectives(in).expert_s, 2 * 7.0 / 8 * 1e9 / 450e9, 1e-12);
  // Pipeline stages four hosts apart send over the network; two devices of a host over NVLink.
  in.parallel = {1, 1, 8};
  in.parallel.pipeline = 4;
  in.stage_send_bytes = 1e8;
  EXPECT_NEAR(Collectives(in).stage_send_s, 2 * 1e8 / 50e9, 1e-12);
  in.parallel = {1, 1, 1};
  in.parallel.pipeline = 4;
  EXPECT_NEAR(Collectives(in).stage_send_s, 2 * 1e8 / 450e9, 1e-12);
}

}  // namespace
}  // namespace tpudoctor

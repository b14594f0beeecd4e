// The mechanisms that make modern LLMs expressible, each on a hand-computable case: context
// parallelism, grouped-matmul tiles of dropless experts, the latent attention's KV cache, and the
// loss gradient XLA computes in the logits' buffer.
#include <gtest/gtest.h>

#include <cmath>

#include "src/cost/sharding.h"
#include "tests/test_util.h"
#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/frontend/frontend.h"

namespace tpudoctor {
namespace {

Result<LoadedModel> Config(const std::string& json, std::int64_t batch, std::int64_t seq) {
  ShapeOptions so;
  so.batch = batch;
  so.dims["seq"] = seq;
  return LoadModel(Source{"config.json", json}, so);
}

Result<LoadedModel> Example(const char* name, std::int64_t batch, std::int64_t seq) {
  auto src = ReadSource((testing::SourceDir() / "examples/configs" / name).string());
  if (!src) return src.error();
  return Config(src->bytes, batch, seq);
}

// Context parallelism by hand: 8 devices as FSDP 4 x context 2. Each attention pass gathers the
// other half of the sequence's keys and values (1 GB in all): forward, the recomputed forward,
// and backward a gather and a reduce-scatter of their gradients. The parameters are gathered over
// both axes (8 devices).
TEST(ModelFeaturesTest, ContextParallelCollectivesByHand) {
  auto p = ParseParallelism("fsdp=4,cp=2");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->context, 2);
  auto r = ResolveParallelism(*p, 8);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data, 1);
  EXPECT_EQ(ToString(*r), "fsdp=4,cp=2");
  EXPECT_FALSE(ResolveParallelism(*p, 12));
  CollectiveInputs in;
  in.parallel = *r;
  in.param_count = 1e9;
  in.context_kv_bytes = 1e9;
  in.passes = 3;
  in.link_bytes_s = 1e11;
  in.train = true;
  const CollectiveTimes t = Collectives(in);
  EXPECT_NEAR(t.context_s, 0.5 * 1e9 * 4 / 1e11, 1e-12);
  EXPECT_NEAR(t.fsdp_s, 7.0 / 8 * 1e9 * (2 + 2 + 4) / 1e11, 1e-12);
  EXPECT_EQ(t.data_s, 0);
}

// Llama 3.1 8B at 8192 tokens on 8 v5p chips: FSDP 8 against FSDP 4 x context 2. Each context
// group runs one sequence split over its two devices: each device does half the work and holds
// half the activations, the state is sharded 8 ways either way, and every attention layer adds
// the key/value gathers: 32 layers x (K and V) x 8192 tokens x 8 heads x 128 x 2 bytes, half of
// it from the other device, 4 passes (forward, recomputed forward, backward gather and
// reduce-scatter) at half the 1200 GB/s ICI.
TEST(ModelFeaturesTest, ContextParallelSplitsEachSequence) {
  auto m = Example("llama-3.1-8b.json", 1, 8192);
  ASSERT_TRUE(m);
  const TargetSpec& v5p = **FindTarget("tpu-v5p");
  EstimateOptions o;
  o.train = true;
  o.batch = 1;
  o.chips = 8;
  o.remat = Remat::kLayer;
  o.parallel = {0, 8, 1};
  auto fsdp = EstimateStep(m->graph, v5p, o);
  o.parallel = *ParseParallelism("fsdp=4,cp=2");
  auto cp = EstimateStep(m->graph, v5p, o);
  ASSERT_TRUE(fsdp && cp) << (cp ? "" : cp.error().message);
  EXPECT_NEAR(cp->forward_ms * 2, fsdp->forward_ms, 1e-9 * fsdp->forward_ms);
  EXPECT_EQ(cp->global_batch, 4);
  EXPECT_EQ(fsdp->global_batch, 8);
  EXPECT_DOUBLE_EQ(cp->memory.weights, fsdp->memory.weights);
  EXPECT_NEAR(cp->memory.activations * 2, fsdp->memory.activations,
              1e-9 * fsdp->memory.activations);
  const double kv = 32 * 2 * 8192.0 * 8 * 128 * 2;
  const double link = 1200e9 * CalibrationFor(v5p, *ParseRuntime("xla")).ici_share;
  EXPECT_NEAR(cp->context_ms, 0.5 * kv * 4 / link * 1e3, 1e-9);
  EXPECT_EQ(fsdp->context_ms, 0);
  // Serving does not split sequences.
  EstimateOptions serve;
  serve.chips = 8;
  serve.parallel = *ParseParallelism("cp=8");
  serve.serve = ServingOptions{128, 128, 1, ""};
  EXPECT_FALSE(EstimateStep(m->graph, v5p, serve));
}

// Ring context parallelism (MaxText's context_parallel_strategy=ring) on Llama 3.1 8B at 32,768
// tokens over 8 v5p chips (cp=8): the same key/value traffic as gathering them whole (7/8 of each
// layer's K and V, 4 passes), but an attention holds two chunks of 1/8 instead of the whole
// sequence's K and V (one layer: 2 x 32768 x 8 heads x 128 elements of 2 bytes, and as much for
// their gradients), and the passes hide behind the attention kernels, which at this length take
// longer: the step loses the gathers' whole time.
TEST(ModelFeaturesTest, RingContextHoldsTwoChunksAndHidesItsPasses) {
  auto m = Example("llama-3.1-8b.json", 1, 32768);
  ASSERT_TRUE(m);
  const TargetSpec& v5p = **FindTarget("tpu-v5p");
  EstimateOptions o;
  o.train = true;
  o.batch = 1;
  o.chips = 8;
  o.remat = Remat::kLayer;
  o.parallel = *ParseParallelism("cp=8");
  auto gathered = EstimateStep(m->graph, v5p, o);
  o.ring_context = true;
  auto ring = EstimateStep(m->graph, v5p, o);
  ASSERT_TRUE(gathered && ring) << (ring ? "" : ring.error().message);
  const double layer_kv = 2 * 32768.0 * 8 * 128 * 2;
  EXPECT_NEAR(gathered->memory.transients - ring->memory.transients, 2 * layer_kv * (1 - 2.0 / 8),
              1e-6 * layer_kv);
  EXPECT_DOUBLE_EQ(ring->context_ms, gathered->context_ms);
  ASSERT_GT(gathered->context_ms, 0);
  EXPECT_NEAR(gathered->step_ms - ring->step_ms, gathered->context_ms, 1e-9 * gathered->step_ms);
  o.parallel = {};
  EXPECT_FALSE(EstimateStep(m->graph, v5p, o));  // a ring needs a context group
}

// Vocabulary tiling (MaxText's num_vocab_tiling) on Llama 3.1 8B at 8,192 tokens on one v5p chip:
// the logits [8192, 128256], the largest tensor, live a quarter at a time with 4 tiles, and the
// head's transient (their gradient's buffer beside them, less the one the loss reuses) shrinks
// by 4; the head's forward runs again for each chunk's gradient, which no layer remat asked for.
TEST(ModelFeaturesTest, VocabTilesKeepOneChunkOfLogits) {
  auto m = Example("llama-3.1-8b.json", 1, 8192);
  ASSERT_TRUE(m);
  const TargetSpec& v5p = **FindTarget("tpu-v5p");
  EstimateOptions o;
  o.train = true;
  o.batch = 1;
  auto whole = EstimateStep(m->graph, v5p, o);
  o.vocab_tiles = 4;
  auto tiled = EstimateStep(m->graph, v5p, o);
  ASSERT_TRUE(whole && tiled) << (tiled ? "" : tiled.error().message);
  ASSERT_GT(tiled->memory.transients, 0);
  EXPECT_NEAR(whole->memory.transients, 4 * tiled->memory.transients,
              1e-9 * whole->memory.transients);
  EXPECT_LT(tiled->memory.activations, whole->memory.activations);
  EXPECT_EQ(whole->recompute_ms, 0);
  EXPECT_GT(tiled->recompute_ms, 0);
  EXPECT_LT(tiled->recompute_ms, 0.2 * tiled->forward_ms);
  o.train = false;
  EXPECT_FALSE(EstimateStep(m->graph, v5p, o));  // tiling splits a training step's loss
}

// Keeping each layer's attention output under per-layer remat (MaxText's custom policy with
// `context` kept) on a two-layer decoder at 8,192 tokens on one v5p chip: the recomputed forward
// skips the two attention kernels, whose forward time a kernel's whole time gives (forward t plus
// its launch, backward 2.5 t plus two launches), and each layer keeps the output, 8192 x 1024
// values of 2 bytes, beside its input.
TEST(ModelFeaturesTest, KeptAttentionOutputsAreNotRecomputed) {
  auto m = Config(R"({"model_type": "llama", "hidden_size": 1024, "intermediate_size": 4096,
      "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 1000})",
                  1, 8192);
  ASSERT_TRUE(m) << m.error().message;
  const TargetSpec& v5p = **FindTarget("tpu-v5p");
  EstimateOptions o;
  o.train = true;
  o.batch = 1;
  o.remat = Remat::kLayer;
  auto rerun = EstimateStep(m->graph, v5p, o);
  o.keep_attention_output = true;
  auto kept = EstimateStep(m->graph, v5p, o);
  ASSERT_TRUE(rerun && kept) << (kept ? "" : kept.error().message);
  const double launch_ms = CalibrationFor(v5p, *ParseRuntime("xla")).kernel_overhead_us * 1e-3;
  double attention_forward_ms = 0;
  int attentions = 0;
  for (const NodeTime& t : rerun->top_nodes) {
    if (t.op != "Attention") continue;
    attention_forward_ms += (t.ms - 3 * launch_ms) / 3.5 + launch_ms;
    ++attentions;
  }
  ASSERT_EQ(attentions, 2);
  EXPECT_NEAR(rerun->recompute_ms - kept->recompute_ms, attention_forward_ms, 1e-9);
  EXPECT_NEAR(kept->memory.activations - rerun->memory.activations, 2 * 8192.0 * 1024 * 2, 1e-3);
  o.remat = Remat::kNone;
  EXPECT_FALSE(EstimateStep(m->graph, v5p, o));  // nothing to spare without per-layer remat
}

// LoRA of rank 8 on a two-layer decoder (hidden 64, 4 heads, MLP 128) on one chip with Adam: an
// adapter has r x (in + out) parameters, per layer Q, K, V, O (64 + 64 each), gate and up
// (64 + 128), down (128 + 64): 8 x 1,088, 17,408 in all; only Q, K and V: 8 x 384 x 2 = 6,144. Only
// the adapters have fp32 gradients (4 bytes) and Adam's moments (8); the frozen weights are
// kept in 16 bits, and their matmuls' backward is the data gradient alone.
TEST(ModelFeaturesTest, LoraTrainsItsAdaptersAlone) {
  auto m = Config(R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100})",
                  1, 256);
  ASSERT_TRUE(m) << m.error().message;
  const TargetSpec& h100 = **FindTarget("nvidia-h100");
  EstimateOptions o;
  o.train = true;
  o.batch = 1;
  auto full = EstimateStep(m->graph, h100, o);
  o.lora_rank = 8;
  auto lora = EstimateStep(m->graph, h100, o);
  o.lora_targets = LoraTargets::kQkv;
  auto qkv = EstimateStep(m->graph, h100, o);
  ASSERT_TRUE(full && lora && qkv) << (lora ? "" : lora.error().message);
  EXPECT_DOUBLE_EQ(lora->memory.gradients, 17408.0 * 4);
  EXPECT_DOUBLE_EQ(lora->memory.optimizer_state, 17408.0 * 8);
  EXPECT_DOUBLE_EQ(qkv->memory.gradients, 6144.0 * 4);
  EXPECT_EQ(lora->memory.master_weights, 0);
  EXPECT_LT(lora->memory.weights, full->memory.weights);
  EXPECT_GT(lora->forward_ms, qkv->forward_ms);  // more adapters to run
  // Under Megatron's FP8 layout (fp8 with the distributed optimizer) the frozen weights are fp8:
  // one byte each where bf16 keeps two; the adapters stay fp32.
  o.lora_targets = LoraTargets::kAll;
  o.distributed_optimizer = true;
  auto lora16 = EstimateStep(m->graph, h100, o);
  o.precision = Precision::kFp8;
  auto lora8 = EstimateStep(m->graph, h100, o);
  ASSERT_TRUE(lora16 && lora8);
  EXPECT_NEAR(lora16->memory.weights - lora8->memory.weights,
              (lora16->memory.weights - 17408.0 * 4) / 2, 1e-6);
  o.precision = Precision::kBf16;
  o.distributed_optimizer = false;
  o.train = false;
  EXPECT_FALSE(EstimateStep(m->graph, h100, o));  // LoRA trains
  // Where the matmuls' work outweighs the launches (Llama 3.1 8B at 2,048 tokens), a backward
  // without weight gradients takes about half a full one's matmul time.
  auto big = Example("llama-3.1-8b.json", 1, 2048);
  ASSERT_TRUE(big);
  EstimateOptions b;
  b.train = true;
  b.batch = 1;
  auto big_full = EstimateStep(big->graph, h100, b);
  b.lora_rank = 16;
  b.lora_targets = LoraTargets::kQkv;
  auto big_lora = EstimateStep(big->graph, h100, b);
  ASSERT_TRUE(big_full && big_lora);
  EXPECT_LT(big_lora->backward_ms, 0.7 * big_full->backward_ms);
  EXPECT_GT(big_lora->backward_ms, 0.4 * big_full->backward_ms);
}

// A weight LoRA froze keeps no input for its backward (the data gradient reads the weight, not
// the input) unless an adapter beside it needs that input for its own gradient. Two layers of
// width 64 (MLP 128) at 256 tokens in bf16: with adapters on Q, K and V alone, the output
// projection's input (256 x 64), the gate and up projections' shared input (256 x 64) and the
// down projection's (256 x 128) are not kept in either layer, nor the LM head's input (256 x 64);
// adapting the output projection too keeps its input; adapting every linear layer, only the
// head's goes.
TEST(ModelFeaturesTest, FrozenWeightsKeepNoInputForTheirBackward) {
  auto m = Config(R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100})",
                  1, 256);
  ASSERT_TRUE(m) << m.error().message;
  const TargetSpec& h100 = **FindTarget("nvidia-h100");
  EstimateOptions o;
  o.train = true;
  o.batch = 1;
  auto saved = [&](int rank, LoraTargets targets) {
    o.lora_rank = rank;
    o.lora_targets = targets;
    auto e = EstimateStep(m->graph, h100, o);
    EXPECT_TRUE(e) << e.error().message;
    return e ? e->components.saved_bytes : 0.0;
  };
  const double full = saved(0, LoraTargets::kAll);
  const double row = 256.0 * 2;  // a token's element in bf16, over the 256 tokens
  const double head = 64 * row, o_proj = 64 * row, gate_up = 64 * row, down = 128 * row;
  EXPECT_DOUBLE_EQ(full - saved(8, LoraTargets::kQkv), 2 * (o_proj + gate_up + down) + head);
  EXPECT_DOUBLE_EQ(full - saved(8, LoraTargets::kAttention), 2 * (gate_up + down) + head);
  EXPECT_DOUBLE_EQ(full - saved(8, LoraTargets::kAll), head);
}

// A small dropless MoE (4 experts, 2 a token, hidden 64, experts 128 wide) at 64 tokens: each
// expert takes 32 routed tokens. In tiles of 8 tokens by 48 outputs, a gate or up projection
// [4, 32, 64] x [4, 64, 128] reads the tokens ceil(128 / 48) = 3 times and each expert's weights
// 32 / 8 = 4 times: 2 and 3 re-reads, 2 x 4 x 64 x (32 x 2 + 128 x 3) bytes; the down projection
// [4, 32, 128] x [4, 128, 64]: 2 x 4 x 128 x (32 x 1 + 64 x 3). With matmul kernels that add
// their bytes' time to their math (matrix_memory_overlap 0), the forward pass grows by those
// bytes at the calibrated bandwidth, per layer.
TEST(ModelFeaturesTest, GroupedMatmulTilesRereadTheirOperands) {
  auto m = Config(R"({"architectures": ["X"], "model_type": "mixtral", "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
      "num_key_value_heads": 2, "vocab_size": 100, "num_local_experts": 4,
      "num_experts_per_tok": 2})",
                  1, 64);
  ASSERT_TRUE(m) << m.error().message;
  const TargetSpec& v5p = **FindTarget("tpu-v5p");
  Calibration cal = CalibrationFor(v5p, *ParseRuntime("xla"));
  ASSERT_EQ(cal.matrix_memory_overlap, 0);
  EstimateOptions o;
  o.batch = 1;
  o.calibration = &cal;
  cal.grouped_matmul_efficiency = 1;  // v5p inherits TPU7x's fitted share
  cal.grouped_tile_rows = 0;
  auto once = EstimateStep(m->graph, v5p, o);
  cal.grouped_tile_rows = 8;
  cal.grouped_tile_cols = 48;
  auto tiled = EstimateStep(m->graph, v5p, o);
  ASSERT_TRUE(once && tiled);
  const double gate_up = 2 * (2.0 * 4 * 64 * (32 * 2 + 128 * 3));
  const double down = 2.0 * 4 * 128 * (32 * 1 + 64 * 3);
  const double bandwidth = 2765e9 * cal.memory_efficiency;
  EXPECT_NEAR(tiled->forward_ms - once->forward_ms, 2 * (gate_up + down) / bandwidth * 1e3, 1e-9);
  // The grouped kernels' efficiency slows the experts' matmuls of dropless routing only: with
  // capacity dispatch (XLA's dots) the step does not change.
  cal.grouped_matmul_efficiency = 0.5;
  auto slower = EstimateStep(m->graph, v5p, o);
  ASSERT_TRUE(slower);
  EXPECT_GT(slower->forward_ms, tiled->forward_ms);
  ShapeOptions so;
  so.dims["seq"] = 64;
  so.moe_capacity_factor = 1.0;
  auto capacity =
      LoadModel(Source{"config.json", R"({"architectures": ["X"], "model_type": "mixtral",
      "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
      "num_local_experts": 4, "num_experts_per_tok": 2})"},
                so);
  ASSERT_TRUE(capacity);
  auto dense = EstimateStep(capacity->graph, v5p, o);
  cal.grouped_matmul_efficiency = 1;
  auto dense_full = EstimateStep(capacity->graph, v5p, o);
  ASSERT_TRUE(dense && dense_full);
  EXPECT_DOUBLE_EQ(dense->forward_ms, dense_full->forward_ms);
}

// Attention tiles by hand, 2,048 queries and keys in 512 x 512 blocks. Causal: query block i
// computes its i + 1 key blocks, 512 x (512 + 1,024 + 1,536 + 2,048) pairs, 62.5% of all (the
// mask keeps 50%). A 128-token window: the first block its own, each later one its own and the
// one before, 512 x (512 + 3 x 1,024) pairs, 43.75% (the mask keeps about 6%).
TEST(ModelFeaturesTest, AttentionKernelsComputeWholeTiles) {
  const AttentionMask causal{.causal = true};
  EXPECT_DOUBLE_EQ(AttentionPairShare(causal, 2048, 2048), 0.5);
  EXPECT_DOUBLE_EQ(AttentionPairShare(causal, 2048, 2048, 512), 512.0 * 5120 / (2048.0 * 2048));
  // A partial last block: 2,000 tokens are 3 blocks of 512 and one of 464 rows reaching all keys.
  EXPECT_DOUBLE_EQ(AttentionPairShare(causal, 2000, 2000, 512),
                   (512.0 * (512 + 1024 + 1536) + 464.0 * 2000) / (2000.0 * 2000));
  const AttentionMask local{.causal = true, .window = 128};
  EXPECT_DOUBLE_EQ(AttentionPairShare(local, 2048, 2048),
                   (128.0 * 2048 - 128.0 * 128 / 2) / (2048.0 * 2048));
  EXPECT_DOUBLE_EQ(AttentionPairShare(local, 2048, 2048, 512), 512.0 * 3584 / (2048.0 * 2048));
  EXPECT_DOUBLE_EQ(AttentionPairShare(AttentionMask{}, 2048, 2048, 512), 1.0);
  // Llama 4's chunks of 8,192 over 32,768 tokens: four causal triangles of 8,192 x 8,193 / 2;
  // in 512-blocks, four triangles of 16 x 17 / 2 tiles.
  const AttentionMask chunked{.causal = true, .chunk = 8192};
  EXPECT_DOUBLE_EQ(AttentionPairShare(chunked, 32768, 32768),
                   4 * 8192.0 * 8193 / 2 / (32768.0 * 32768));
  EXPECT_DOUBLE_EQ(AttentionPairShare(chunked, 32768, 32768, 512),
                   4 * 512.0 * 512 * 16 * 17 / 2 / (32768.0 * 32768));
}

// DeepSeek-V3 served: the cache keeps a 512-wide latent and a 64-wide rotary key per token and
// layer (the DeepSeek-V2 paper's (d_c + d_h^R) x layers elements): 61 x 576 x 2 bytes a token,
// not the 128 heads' expanded keys and values.
TEST(ModelFeaturesTest, LatentAttentionCachesTheLatent) {
  auto m = Example("deepseek-v3.json", 1, 256);
  ASSERT_TRUE(m);
  EstimateOptions o;
  o.chips = 8;
  o.parallel = {0, 1, 8};
  o.serve = ServingOptions{256, 256, 8, ""};
  auto e = EstimateStep(m->graph, **FindTarget("tpu-7x"), o);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_DOUBLE_EQ(e->serving->kv_bytes_per_token, 61.0 * 576 * 2);
  // The heads share the latent: each of a replica's 8 tensor-parallel devices holds all of it
  // (8 TPU7x chips are 16 devices, two replicas with 4 of the 8 sequences of 512 tokens each).
  EXPECT_DOUBLE_EQ(e->serving->kv_cache_bytes, 4 * 512 * 61.0 * 576 * 2);
}

// A pre-XQA decode kernel (one thread block per sequence and query head) reads a grouped-query
// layer's KV cache once per query head: Llama 2 70B's 64 query heads share 8 key/value heads, so
// a decode step reads its cache 8 times; the cache it holds is the same.
TEST(ModelFeaturesTest, PreXqaDecodeReadsTheCachePerQueryHead) {
  auto m = Example("llama-2-70b.json", 1, 256);
  ASSERT_TRUE(m);
  EstimateOptions o;
  o.chips = 4;
  o.parallel = {0, 1, 4};
  o.serve = ServingOptions{256, 256, 16, ""};
  const TargetSpec& h100 = **FindTarget("nvidia-h100");
  auto shared = EstimateStep(m->graph, h100, o);
  o.serve->kv_reads_per_query_head = true;
  auto per_head = EstimateStep(m->graph, h100, o);
  ASSERT_TRUE(shared && per_head);
  EXPECT_NEAR(per_head->serving->decode_kv_ms, 8 * shared->serving->decode_kv_ms, 1e-9);
  EXPECT_DOUBLE_EQ(per_head->serving->kv_cache_bytes, shared->serving->kv_cache_bytes);
}

// Under XLA a language model's loss gradient (softmax minus the one-hot labels) takes the logits'
// buffer: the head's backward holds one [tokens, vocab] tensor, not two. Llama 3.1 8B, 2 x 4096
// tokens on one v6e with per-layer remat: the head is the peak, its transient the logits alone.
TEST(ModelFeaturesTest, LossGradientTakesTheLogitsBuffer) {
  auto m = Example("llama-3.1-8b.json", 2, 4096);
  ASSERT_TRUE(m);
  EstimateOptions o;
  o.train = true;
  o.batch = 2;
  o.remat = Remat::kLayer;
  auto e = EstimateStep(m->graph, **FindTarget("tpu-v6e"), o);
  ASSERT_TRUE(e) << e.error().message;
  const double logits = 2 * 4096.0 * 128256 * 2;
  EXPECT_NEAR(e->memory.transients, logits, 1e-9 * logits);
}

}  // namespace
}  // namespace tpudoctor

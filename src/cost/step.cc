// Step assembly: forward + backward + optimizer update + gradient all-reduce (ICI within a
// slice, DCN between slices), host overhead, throughput and MFU.
#include "src/cost/step.h"

#include <algorithm>
#include <cmath>

#include "src/cost/sharding.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {

namespace {

double UpdateBytesPerParam(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd:
      return 12;  // read p, g; write p
    case Optimizer::kMomentum:
      return 20;  // + read/write the momentum buffer
    case Optimizer::kAdam:
      return 28;  // read p, g, m, v; write p, m, v
    case Optimizer::kAdafactor:
      return 14;  // read p, g; write p; factored statistics are small
  }
  return 28;
}

// What the collectives of one micro-batch on the most loaded pipeline stage move, and over what
// links (sharding.h): the stage's `stage_params` and 1/stages of the layers' traffic.
CollectiveInputs StepCollectives(const StepContext& c, double stage_params,
                                 double trainable_share) {
  const EstimateOptions& options = c.options;
  const double stages = c.Stages();
  const double split = c.WorkSplit();
  CollectiveInputs ci;
  ci.parallel = c.parallel;
  ci.param_count = stage_params;
  ci.expert_param_count = c.facts.expert_params / stages;
  ci.passes = !options.train ? 1 : RematPerLayer(c.remat) ? 3 : 2;
  ci.attention_recomputed = !options.keep_attention_output;
  ci.expert_exchange_bytes = c.ExpertExchangeBytes();
  ci.experts = static_cast<double>(c.graph.facts().experts);
  ci.experts_per_token = static_cast<double>(c.graph.facts().experts_per_token);
  ci.dedup_dispatch = options.dedup_expert_dispatch;
  if (c.parallel.context > 1)
    ci.context_kv_bytes = c.facts.attention_kv_elements * c.ActivationBytes() / stages;
  ci.weight_bytes_per_param = c.ModelWeightBytes();
  ci.grad_bytes_per_param = c.GradientBytes();
  ci.trainable_share = trainable_share;
  // Two all-reduces of a layer's activations forward (after attention and after the MLP) and,
  // training, two backward, each of the tensor that crosses the layer boundary.
  ci.tensor_allreduce_bytes =
      c.layers.count > 0
          ? (options.train ? 4 : 2) * c.layers.boundary_bytes / c.parallel.context / stages
          : 0;
  // A stage sends the tensor crossing one layer boundary to the next stage, once per chunk it
  // holds; tensor and context parallelism split it (Megatron scatters it over the tensor group).
  if (c.layers.count > 0)
    ci.stage_send_bytes =
        c.layers.boundary_bytes / c.layers.count / split * c.parallel.virtual_stages;
  // The two devices of a v2/v3/7x chip reduce between themselves first (on the chip, about free);
  // the ring between chips runs at the chip's links.
  ci.link_bytes_s = c.target.ici_gbps.value_or(0) * 1e9 * c.cal.ici_share;
  ci.scaleout_bytes_s = c.target.scaleout_gbps.value_or(0) * 1e9;
  ci.devices_per_host = c.target.chips_per_host * c.devices_per_chip;
  ci.distributed_optimizer = options.distributed_optimizer;
  ci.train = options.train;
  return ci;
}

// Expert parallelism: a device receives its tokens from every device of its group in the order
// they were sent and sorts them by its local expert for the grouped matmuls, then back into that
// order for the combine all-to-all (Megatron's sort_chunks_by_idxs around its all-to-alls;
// DeepEP's and HybridEP's received tokens are permuted likewise; MaxText's local permute after its
// ragged all-to-all): a read and a write of the dispatched tokens and of the results, per micro-
// batch on a stage, forward, and backward for their gradients. A device with one expert a layer
// takes its tokens as they come.
double ExpertRegroupSeconds(const StepContext& c) {
  const std::int64_t experts = c.graph.facts().experts;
  if (c.parallel.expert <= 1 || experts / c.parallel.expert <= 1) return 0;
  return c.MemorySeconds(c.cal.expert_token_passes * c.ExpertExchangeBytes());
}

}  // namespace

double ExpertExchangeSeconds(const StepContext& c, double bytes) {
  CollectiveInputs ci = StepCollectives(c, 0, 1);
  ci.passes = 1;
  ci.expert_exchange_bytes = bytes;
  return Collectives(ci).expert_s;
}

// Phase 3: the step time: forward + backward + optimizer update + gradient all-reduce, over
// the step's micro-batches and, with pipeline parallelism, the stages' fill and drain.
void AssembleStep(const StepContext& c, const ForwardBackward& fb, const Parameters& params,
                  Estimate& e) {
  const EstimateOptions& options = c.options;
  const double overhead_s = c.cal.kernel_overhead_us * 1e-6;
  const double micro = options.micro_batches;
  const double stages = c.Stages();
  // A pipeline stage runs 1/stages of the layers and, on the slowest stage, the work outside them
  // (the embedding, the output head and the loss). Backward splits as forward does.
  const double layer_share = fb.forward_s > 0 ? fb.layer_forward_s / fb.forward_s : 0;
  const double stage_share = stages > 1 ? layer_share / stages + (1 - layer_share) : 1;
  const double stage_params = c.StageParams(params.count);
  double opt = 0;
  if (options.train) {
    // bf16 parameters and optimizer state move half the bytes.
    const double state_scale = options.precision == Precision::kBf16Params ? 0.5 : 1.0;
    // LoRA updates its adapters alone: two small tensors per adapted matmul.
    const double trained = c.TrainableShare(params.count);
    const double tensors = options.lora_rank > 0 ? 2.0 * c.lora.count : params.tensors;
    opt = c.MemorySeconds(stage_params * trained * UpdateBytesPerParam(options.optimizer) *
                          state_scale) +
          tensors * stage_params / std::max(1.0, params.count) * overhead_s;
  }
  // Tensor and context parallelism divide every op's work; rematerialisation runs forward work
  // again in the backward pass; the collectives of each parallelism axis (sharding.h).
  const double split = c.WorkSplit();
  // Per-layer remat runs each layer's forward pass again, not the embedding or the output head;
  // `dots` reruns the ops between the matmuls (of the whole graph: it may have no layers), and
  // save_dot_except_mlpwi the MLPs' up-projections too (in the layers).
  // A kept attention output (EstimateOptions::keep_attention_output) spares that pass the
  // attention kernels.
  const bool layer_remat = RematPerLayer(c.remat);
  const double attention_rerun_s =
      options.train && layer_remat && !options.keep_attention_output ? fb.attention_forward_s : 0;
  const double layer_rerun_s =
      fb.layer_forward_s - (options.keep_attention_output ? fb.attention_forward_s : 0);
  const double dots_rerun_s = fb.forward_vector_s * stage_share;
  const double recompute = !options.train            ? 0
                           : layer_remat             ? layer_rerun_s / stages
                           : c.remat == Remat::kDots ? dots_rerun_s
                           : c.remat == Remat::kDotsExceptMlpUp
                               ? dots_rerun_s + fb.mlp_up_forward_s / stages
                               : 0;
  // A tiled loss head (EstimateOptions::vocab_tiles) computes each chunk's logits again for its
  // gradient: the work outside the layers (the head's; the embedding's is a gather) once more.
  const double head_recompute =
      options.train && options.vocab_tiles > 1 ? fb.forward_s - fb.layer_forward_s : 0;
  const CollectiveInputs ci = StepCollectives(c, stage_params, c.TrainableShare(params.count));
  const CollectiveTimes coll = Collectives(ci);
  if (options.train) {
    e.components.optimizer_bytes =
        params.count * c.TrainableShare(params.count) * UpdateBytesPerParam(options.optimizer);
    e.components.parameter_tensors = params.tensors;
  }
  e.components.matrix_peak_flops = c.rates.matrix_flops;
  e.components.bandwidth = c.rates.bandwidth;
  const double shards = c.StateShards();
  // One micro-batch on the most loaded stage, then the step's micro-batches.
  const double regroup_s = ExpertRegroupSeconds(c);
  const double forward_ms = (fb.forward_s / split * stage_share + regroup_s) * 1e3;
  const double backward_ms =
      options.train ? (fb.backward_s / split * stage_share + regroup_s) * 1e3 : 0;
  const double recompute_ms = (recompute + head_recompute) / split * 1e3;
  // A ring's key/value passes run beside the attention kernels (EstimateOptions::ring_context),
  // in the recomputed forward too: only what they cannot hide waits. Gathered whole, they wait.
  const double ring_cover_s =
      options.ring_context ? (fb.attention_s + attention_rerun_s) / split / stages : 0;
  const double exposed_context_s = std::max(0.0, coll.context_s - ring_cover_s);
  const double collectives_ms = (coll.tensor_s + coll.expert_s + exposed_context_s) * 1e3;
  // Interleaved schedules overlap the stage-to-stage sends with compute (Megatron-core's
  // overlap_p2p_comm); the plain 1F1B schedule waits for them.
  const double send_ms = coll.stage_send_s * 1e3;
  const double exposed_send_ms = c.parallel.virtual_stages > 1 ? 0 : send_ms;
  e.micro_batches = options.micro_batches;
  e.forward_ms = micro * forward_ms;
  e.backward_ms = micro * backward_ms;
  e.recompute_ms = micro * recompute_ms;
  e.optimizer_ms = opt / shards * c.OptimizerShare(params.count) * 1e3;
  e.allreduce_ms = coll.data_s * 1e3;
  // The distributed optimizer reduce-scatters each gradient bucket as the last micro-batch's
  // backward pass produces it and all-gathers the weights as the first one's forward pass needs
  // them (Megatron's overlap_grad_reduce and overlap_param_gather): one micro-batch's compute
  // hides it. A plain all-reduce waits for the backward pass.
  const double exposed_allreduce_ms =
      options.distributed_optimizer
          ? std::max(0.0, e.allreduce_ms - forward_ms - backward_ms - recompute_ms)
          : e.allreduce_ms;
  e.fsdp_ms = micro * coll.fsdp_s * 1e3;
  e.tensor_ms = micro * coll.tensor_s * 1e3;
  e.expert_ms = micro * coll.expert_s * 1e3;
  e.context_ms = micro * coll.context_s * 1e3;
  const double exposed_context_ms = micro * exposed_context_s * 1e3;
  e.pipeline_send_ms = micro * send_ms;
  // Filling and draining the pipe: every stage idles (stages - 1) / chunks micro-batch slots.
  e.pipeline_bubble_ms =
      stages > 1 ? (stages - 1) / c.parallel.virtual_stages *
                       (forward_ms + backward_ms + recompute_ms + collectives_ms + exposed_send_ms)
                 : 0;
  // XLA overlaps the FSDP all-gather of the next layer with the current one: only what the
  // compute cannot hide adds to the step.
  const double compute_ms = e.forward_ms + e.backward_ms + e.recompute_ms;
  const double exposed_fsdp_ms = std::max(0.0, e.fsdp_ms - compute_ms);
  // Overlapped expert all-to-alls (EstimateOptions::overlap_expert_comm) run beside another
  // micro-batch's compute: of M micro-batches' work, M - 1 can hide them.
  const double exposed_expert_ms =
      options.overlap_expert_comm ? std::max(0.0, e.expert_ms - compute_ms * (micro - 1) / micro)
                                  : e.expert_ms;
  // Multislice, data parallel: each chip all-reduces its gradient shard with its peers in the
  // other slices over DCN, overlapped with the backward pass (XLA's async collectives; MaxText's
  // data-parallel overlap flags). FSDP over the slices: each chip exchanges its share of the
  // state with its peers in the other slices for the forward and backward all-gathers of the
  // weights and the gradients' reduce-scatter, overlapped with the whole step like FSDP in a slice.
  const int slices = options.slices;  // validated by EstimateStep
  const bool dcn_fsdp = options.dcn == DcnParallelism::kFsdp;
  if (options.train && slices > 1 && c.target.dcn_gbps) {
    const double shard = stage_params / shards;  // parameters per chip
    const double grad_bytes = ci.grad_bytes_per_param * ci.trainable_share;
    const double bytes = dcn_fsdp
                             ? (slices - 1) * shard * (2 * ci.weight_bytes_per_param + grad_bytes)
                             : 2.0 * (slices - 1) / slices * shard * grad_bytes;
    e.dcn_ms = bytes * c.devices_per_chip / (*c.target.dcn_gbps * 1e9) * 1e3;
  }
  const double exposed_dcn_ms =
      std::max(0.0, e.dcn_ms - e.backward_ms - e.recompute_ms - (dcn_fsdp ? e.forward_ms : 0));
  // The host launches the device's work ahead of it: the step is the longer of the two. Each
  // micro-batch is a forward and a backward pass; the optimizer update runs once.
  const double passes = options.train ? 2 * micro + 1 : micro;
  e.host_ms = c.cal.step_overhead_us * 1e-3 * passes +
              c.cal.host_op_us * 1e-3 * micro * stage_share *
                  (e.components.forward_kernels + e.components.backward_kernels);
  // The experts wait for their tokens, the attention for its keys and values: the all-to-alls
  // and the context all-gathers are on the critical path.
  e.step_ms = std::max(e.host_ms, compute_ms + e.optimizer_ms) + exposed_allreduce_ms +
              e.tensor_ms + exposed_expert_ms + exposed_context_ms + micro * exposed_send_ms +
              e.pipeline_bubble_ms + exposed_fsdp_ms + exposed_dcn_ms;
  const double replicas = static_cast<double>(c.Devices()) / split / stages * slices;
  e.global_batch = static_cast<std::int64_t>(static_cast<double>(options.batch) * micro * replicas);
  // A training step's model FLOPs are three forward passes' (the backward's data and weight
  // gradients); LoRA's frozen weights have no weight gradient: two.
  const double passes_counted = !options.train ? 1 : options.lora_rank > 0 ? 2 : 3;
  e.model_flops = fb.useful_flops * passes_counted * micro * replicas;
  const double step_s = e.step_ms / 1e3;
  // MFU against the peak of the precision the matmuls run at (fp16 tensor cores on a V100, TF32
  // for fp32 on an A100, the fp8 or int8 datasheet peak), not a fixed bf16 or fp32 figure.
  const double chip_peak = c.rates.peak_flops * c.devices_per_chip;
  if (step_s > 0 && chip_peak > 0)
    e.mfu = e.model_flops / (step_s * chip_peak * options.chips * slices);
  if (step_s > 0) e.samples_per_s = static_cast<double>(e.global_batch) / step_s;
}

}  // namespace tpudoctor

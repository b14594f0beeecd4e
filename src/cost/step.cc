// Step assembly: forward + backward + optimizer update + gradient all-reduce (ICI within a
// slice, DCN between slices), host overhead, throughput and MFU.
#include "src/cost/step.h"

#include <algorithm>
#include <cmath>

#include "src/cost/sharding.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {

// The passes of a training step's loop the host drives: forward, backward, optimizer update.
constexpr double kTrainingPasses = 3;
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

}  // namespace

// Phase 3: the step time: forward + backward + optimizer update + gradient all-reduce.
void AssembleStep(const StepContext& c, const ForwardBackward& fb, const Parameters& params,
                  Estimate& e) {
  const EstimateOptions& options = c.options;
  const double overhead_s = c.cal.kernel_overhead_us * 1e-6;
  double opt = 0;
  if (options.train) {
    // bf16 parameters and optimizer state move half the bytes.
    const double state_scale = options.precision == Precision::kBf16Params ? 0.5 : 1.0;
    opt = params.count * UpdateBytesPerParam(options.optimizer) * state_scale /
              (c.rates.bandwidth * c.cal.memory_efficiency) +
          params.tensors * overhead_s;
  }
  // Tensor and context parallelism divide every op's work; rematerialisation runs forward work
  // again in the backward pass; the collectives of each parallelism axis (sharding.h).
  const double split = c.WorkSplit();
  // Per-layer remat runs each layer's forward pass again, not the embedding or the output head;
  // `dots` reruns the ops between the matmuls (of the whole graph: it may have no layers).
  const double recompute = !options.train ? 0
                           : c.remat == Remat::kLayer || c.remat == Remat::kOffload
                               ? fb.layer_forward_s
                           : c.remat == Remat::kDots ? fb.forward_vector_s
                                                     : 0;
  CollectiveInputs ci;
  ci.parallel = c.parallel;
  ci.param_count = params.count;
  ci.expert_param_count = c.facts.expert_params;
  ci.passes = !options.train ? 1 : c.remat == Remat::kLayer || c.remat == Remat::kOffload ? 3 : 2;
  // Activations cross in the compute dtype (bf16 unless fp32); a context group's devices each
  // route their share of the sequence.
  ci.expert_exchange_bytes =
      c.facts.expert_exchange_elements * c.ActivationBytes() / c.parallel.context;
  if (c.parallel.context > 1)
    ci.context_kv_bytes = c.facts.attention_kv_elements * c.ActivationBytes();
  ci.weight_bytes_per_param = options.precision == Precision::kFp32 ? 4 : 2;
  ci.grad_bytes_per_param =
      options.precision == Precision::kMixed || options.precision == Precision::kBf16Params ? 2 : 4;
  // Two all-reduces of a layer's activations forward (after attention and after the MLP) and,
  // training, two backward, each of the tensor that crosses the layer boundary.
  ci.tensor_allreduce_bytes =
      c.layers.count > 0 ? (options.train ? 4 : 2) * c.layers.boundary_bytes / c.parallel.context
                         : 0;
  // The two devices of a v2/v3/7x chip reduce between themselves first (on the chip, about free);
  // the ring between chips runs at the chip's links.
  ci.link_bytes_s = c.target.ici_gbps.value_or(0) * 1e9 * c.cal.ici_share;
  ci.train = options.train;
  const CollectiveTimes coll = Collectives(ci);
  if (options.train) {
    e.components.optimizer_bytes = params.count * UpdateBytesPerParam(options.optimizer);
    e.components.parameter_tensors = params.tensors;
  }
  e.components.matrix_peak_flops = c.rates.matrix_flops;
  e.components.bandwidth = c.rates.bandwidth;
  const double shards = c.StateShards();
  e.forward_ms = fb.forward_s / split * 1e3;
  e.backward_ms = fb.backward_s / split * 1e3;
  e.recompute_ms = recompute / split * 1e3;
  e.optimizer_ms = opt / shards * c.ExpertStateShare(params.count) * 1e3;
  e.allreduce_ms = coll.data_s * 1e3;
  e.fsdp_ms = coll.fsdp_s * 1e3;
  e.tensor_ms = coll.tensor_s * 1e3;
  e.expert_ms = coll.expert_s * 1e3;
  e.context_ms = coll.context_s * 1e3;
  // XLA overlaps the FSDP all-gather of the next layer with the current one: only what the
  // compute cannot hide adds to the step.
  const double compute_ms = e.forward_ms + e.backward_ms + e.recompute_ms;
  const double exposed_fsdp_ms = std::max(0.0, e.fsdp_ms - compute_ms);
  // Multislice, data parallel: each chip all-reduces its gradient shard with its peers in the
  // other slices over DCN, overlapped with the backward pass (XLA's async collectives; MaxText's
  // data-parallel overlap flags). FSDP over the slices: each chip exchanges its share of the
  // state with its peers in the other slices for the forward and backward all-gathers of the
  // weights and the gradients' reduce-scatter, overlapped with the whole step like FSDP in a slice.
  const int slices = options.slices;  // validated by EstimateStep
  const bool dcn_fsdp = options.dcn == DcnParallelism::kFsdp;
  if (options.train && slices > 1 && c.target.dcn_gbps) {
    const double shard = params.count / shards;  // parameters per chip
    const double bytes =
        dcn_fsdp ? (slices - 1) * shard * (2 * ci.weight_bytes_per_param + ci.grad_bytes_per_param)
                 : 2.0 * (slices - 1) / slices * shard * ci.grad_bytes_per_param;
    e.dcn_ms = bytes * c.devices_per_chip / (*c.target.dcn_gbps * 1e9) * 1e3;
  }
  const double exposed_dcn_ms =
      std::max(0.0, e.dcn_ms - e.backward_ms - e.recompute_ms - (dcn_fsdp ? e.forward_ms : 0));
  // The host launches the device's work ahead of it: the step is the longer of the two.
  e.host_ms =
      c.cal.step_overhead_us * 1e-3 * (options.train ? kTrainingPasses : 1) +
      c.cal.host_op_us * 1e-3 * (e.components.forward_kernels + e.components.backward_kernels);
  // The experts wait for their tokens, the attention for its keys and values: the all-to-alls
  // and the context all-gathers are on the critical path.
  e.step_ms = std::max(e.host_ms, compute_ms + e.optimizer_ms) + e.allreduce_ms + e.tensor_ms +
              e.expert_ms + e.context_ms + exposed_fsdp_ms + exposed_dcn_ms;
  const double replicas = static_cast<double>(c.Devices()) / split * slices;
  e.global_batch = static_cast<std::int64_t>(static_cast<double>(options.batch) * replicas);
  e.model_flops = fb.useful_flops * (options.train ? 3 : 1) * replicas;
  const double step_s = e.step_ms / 1e3;
  // MFU against the peak of the precision the matmuls run at (fp16 tensor cores on a V100, TF32
  // for fp32 on an A100), not a fixed bf16 or fp32 figure.
  const double chip_peak = c.rates.matrix_flops * c.devices_per_chip;
  if (step_s > 0 && chip_peak > 0)
    e.mfu = e.model_flops / (step_s * chip_peak * options.chips * slices);
  if (step_s > 0) e.samples_per_s = static_cast<double>(e.global_batch) / step_s;
}

}  // namespace tpudoctor

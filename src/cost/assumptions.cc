// The assumptions an estimate prints: the runtime and kernels, rates, calibration, memory model.
#include "src/cost/step.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// The KV cache's dtype as a serving estimate holds it: --kv-cache-dtype, else the compute dtype's.
std::string KvCacheDtypeName(const StepContext& c) {
  const std::string& asked = c.options.serve->kv_cache_dtype;
  if (!asked.empty()) return asked;
  if (c.element_bytes == 4) return "fp32";
  return c.options.precision == Precision::kFp16 ? "fp16" : "bf16";
}

// How a serving estimate runs the requests: the round of prefills and decode steps, the KV reads.
std::string ServingAssumption(const StepContext& c) {
  const ServingOptions& s = *c.options.serve;
  const std::string per_query_head =
      s.kv_reads_per_query_head
          ? "; a grouped-query layer's once per query head, as a pre-XQA decode kernel reads it"
          : "";
  const std::string cache =
      s.kv_cache_length > 0
          ? "each slot's static KV cache (" + KvCacheDtypeName(c) + per_query_head + ") of " +
                std::to_string(s.kv_cache_length) +
                " tokens whole, masked, as a fixed-shape engine without a ragged kernel does"
          : "each sequence's KV cache (" + KvCacheDtypeName(c) + per_query_head +
                ") at the mean context, as a paged engine reads it (vLLM, TensorRT-LLM; an engine "
                "with a static cache, such as JetStream, reads every slot's whole cache: "
                "--kv-cache-length N --bucketed-prefill)";
  const std::string prefill =
      s.bucketed_prefill
          ? "TTFT is one prompt's inference step padded to its bucket of " +
                std::to_string(PrefillBucket(s.prompt_tokens)) +
                " tokens (without queueing), and the prefills run one prompt at a time between "
                "the decode steps, each reading the weights"
          : "TTFT is one prompt's inference step (without queueing), and the prefills of the "
            "requests in flight run batched between the decode steps, reading the weights once";
  const std::string replicated =
      s.replicated_prefill ? " (one stream of them for the slice, each replicated on every replica)"
                           : "";
  const std::string held = s.kv_cache_length > 0 ? "the KV cache is held at the slots' length"
                                                 : "the KV cache is held at each sequence's "
                                                   "full length";
  const std::string expert =
      c.parallel.expert > 1
          ? "; expert parallelism over " + std::to_string(c.parallel.expert) +
                " devices runs the attention data parallel (vLLM's and SGLang's data-parallel "
                "attention, TensorRT-LLM's enable_attention_dp): each device serves its own share "
                "of the sequences with the whole attention and holds 1/" +
                std::to_string(c.parallel.expert) +
                " of the experts, and every MoE layer sends each routed token to its expert's "
                "device and back (two all-to-alls a decode step, balanced routing)"
          : "";
  return "serving: " + std::to_string(s.concurrency) + " requests in flight of " +
         std::to_string(s.prompt_tokens) + " tokens in and " + std::to_string(s.output_tokens) +
         " out, continuously batched: a decode step runs one token of each, reading the weights "
         "once and " +
         cache + ", its matmuls and attention overlapped with the reads; " + prefill + replicated +
         "; " + held + expert;
}

// How ops became kernels, in the words the report prints.
std::string RuntimeAssumption(const StepContext& c, const Estimate& e) {
  const std::string kernels = std::to_string(e.kernels) + " kernels per forward pass";
  if (!c.runtime.model().fused) {
    return "runtime " + std::string(NameOf(c.runtime)) + " (" + kernels +
           ", one per op): per op max(FLOPs / (peak x efficiency), bytes / (bandwidth x "
           "efficiency)) + launch overhead";
  }
  const std::string combine =
      c.cal.matrix_memory_overlap >= 1 ? std::string("max(")
      : c.cal.matrix_memory_overlap <= 0
          ? std::string("the sum, for a kernel with a matmul, else the max, of (")
          : "max + " + FormatFixed(1 - c.cal.matrix_memory_overlap, 2) +
                " x min, for a kernel with a matmul, of (";
  return "runtime " + std::string(NameOf(c.runtime)) + " (" + kernels +
         " after fusion): per fused kernel " + combine +
         "FLOPs / (peak x efficiency), bytes crossing its boundary / (bandwidth x efficiency)) + "
         "launch overhead";
}

// How convolutions were costed on a GPU, and how to say otherwise; nothing for a model without
// convolutions. On a TPU XLA picks the layouts, and --channels-last changes nothing.
std::optional<std::string> ConvLayoutAssumption(const StepContext& c, const Estimate& e) {
  if (c.target.is_tpu()) {
    if (!c.options.channels_last) return std::nullopt;
    return "--channels-last changes nothing on a TPU: XLA chooses the layouts";
  }
  if (e.components.conv_flops <= 0) return std::nullopt;
  const std::optional<double> nhwc = c.cal.channels_last_conv_efficiency;
  const std::string nhwc_cost =
      nhwc ? "implicit GEMMs on the tensor cores at the precision's rate x " + FormatFixed(*nhwc, 2)
           : "";
  const std::string nchw_cost = "the bf16 rate x " + FormatFixed(c.cal.ConvEfficiency(), 2) +
                                " whatever the precision, as NCHW runs measured";
  if (nhwc && c.options.channels_last)
    return "convolutions channels-last (NHWC, --channels-last): " + nhwc_cost;
  if (c.options.channels_last) {
    return "--channels-last: the efficiency factors `" + c.cal.name +
           "` have no channels-last factor, so convolutions are costed as they describe";
  }
  if (nhwc && XlaOnGpu(c)) {
    return "convolutions as XLA's GPU layout assignment lays them out on Volta and later: 16-bit "
           "ones NHWC, " +
           nhwc_cost + "; fp32 ones NCHW, " + nchw_cost;
  }
  if (!c.cal.conv_rate_ignores_precision) return std::nullopt;
  return "convolutions in NCHW (PyTorch's and ONNX's default layout): " + nchw_cost +
         "; pass --channels-last if the model runs channels_last";
}

// What a precision computes in and holds, for the step at hand: training keeps fp32 master
// weights beside 16-bit compute; an inference step under autocast keeps the weights it was given
// (fp32); a server holds them as it reads them (StepContext::ServedWeightBytes).
std::string PrecisionNote(const StepContext& c) {
  const Precision p = c.options.precision;
  if (p == Precision::kFp32) return "";
  if (p == Precision::kInt8Weights)
    return " (weight-only int8: 1-byte weights, dequantized to bf16 for bf16 matmuls)";
  if (p == Precision::kBf16Params)
    return " (bf16 weights, gradients and optimizer state; no fp32 copy)";
  const std::string compute =
      p == Precision::kFp8 ? "bf16 compute with fp8 matmul operands"
      : p == Precision::kInt8
          ? "bf16 compute with int8 weight-matmul operands, AQT: each operand's "
            "scale from an extra read of it every step"
      : p == Precision::kFp16
          ? "fp16 compute" + std::string(c.options.train ? " with loss scaling" : "")
      : p == Precision::kMixed
          ? std::string(c.options.train ? "16-bit weights, gradients and compute"
                                        : "16-bit weights and compute")
          : "bf16 compute";
  if (c.options.serve) {
    return " (" + compute + "; weights held at " + FormatFixed(c.ServedWeightBytes(), 0) +
           (c.ServedWeightBytes() == 1 ? " byte" : " bytes") + " each)";
  }
  if (!c.options.train) return " (" + compute + (p == Precision::kMixed ? ")" : "; fp32 weights)");
  return " (" + compute + ", fp32 master weights)";
}

}  // namespace

// What the figures assume, in the words the report prints.
std::vector<std::string> Assumptions(const StepContext& c, const Estimate& e) {
  const EstimateOptions& options = c.options;
  const Calibration& cal = c.cal;
  std::vector<std::string> out = {
      std::string(options.train ? "training step" : "inference step") + ", " +
          std::string(NameOf(options.precision)) + PrecisionNote(c) +
          (options.train ? ", optimizer " + std::string(NameOf(options.optimizer)) : ""),
      c.rates.matrix_note,
      "efficiency factors `" + cal.name + "`: matmul " + FormatFixed(cal.matrix_efficiency, 2) +
          ", conv " + FormatFixed(cal.ConvEfficiency(), 2) + ", bandwidth " +
          FormatFixed(cal.memory_efficiency, 2) + ", per-kernel overhead " +
          FormatFixed(cal.kernel_overhead_us, 1) + " us (" + cal.source + ")",
      RuntimeAssumption(c, e) +
          std::string(c.target.is_tpu()
                          ? "; matmuls padded to " +
                                std::to_string(c.target.mxu_dim.value_or(128)) + "x" +
                                std::to_string(c.target.mxu_dim.value_or(128)) + " MXU tiles"
                          : ""),
  };
  if (auto layout = ConvLayoutAssumption(c, e)) out.push_back(*layout);
  if (options.train) {
    out.push_back("backward = " + FormatFixed(cal.matrix_backward_ratio, 1) +
                  "x forward for matmuls and convolutions (their data and weight gradients), " +
                  FormatFixed(cal.attention_backward_ratio, 1) +
                  "x for attention (the scores recomputed), " + FormatFixed(cal.backward_ratio, 1) +
                  "x for the other kernels; optimizer update bandwidth-bound over the parameter "
                  "state");
  }
  if (c.facts.any_attention && cal.fused_attention) {
    out.push_back(
        "attention (softmax(QK^T)V) runs as one fused kernel: the S x S scores are never stored");
  }
  if (!options.attention_kernel.empty()) {
    out.push_back("fused attention runs " + options.attention_kernel + "'s kernels at " +
                  FormatFixed(AttentionEfficiency(c), 2) + " of the bf16 peak (" + c.target.name +
                  "'s attention_kernels, with its source)");
  }
  if (!c.runtime.model().fused && cal.fused_activations && c.facts.any_activation) {
    out.push_back(
        "GELU and SiLU, written out by the export as several ops, run as one kernel each "
        "(PyTorch's nn.GELU and nn.SiLU)");
  }
  if (!c.runtime.model().fused && c.facts.any_depthwise && OwnDepthwiseKernels(c) &&
      (cal.depthwise_memory_efficiency || cal.depthwise_backward_ratio)) {
    out.push_back(
        "depthwise convolutions move their bytes at " +
        FormatFixed(cal.depthwise_memory_efficiency.value_or(cal.memory_efficiency), 2) +
        " of the bandwidth" +
        (options.train
             ? ", backward " +
                   FormatFixed(cal.depthwise_backward_ratio.value_or(cal.backward_ratio), 1) +
                   "x forward"
             : "") +
        " (the framework's own depthwise kernels, not cuDNN's)");
  }
  if (options.train && c.facts.any_implied_batchnorm) {
    out.push_back(
        std::string(
            "a conv network without normalization ops was exported with BatchNorm "
            "folded into the convs; training runs one BatchNorm per conv again, reading and "
            "writing the conv's output once more") +
        (c.runtime.model().fused
             ? c.target.is_tpu() ? " inside the convolution's fusion (XLA:TPU)"
                                 : " as a kernel of its own (no compiler fuses into a GPU's cuDNN "
                                   "convolution)"
             : ""));
  }
  const std::string devices = c.devices_per_chip > 1
                                  ? std::to_string(c.Devices()) + " devices (" +
                                        std::to_string(options.chips) + " chips x " +
                                        std::to_string(c.devices_per_chip) + ")"
                                  : std::to_string(options.chips) + " chips";
  if (c.Devices() > 1 && c.parallel.data == c.Devices() && c.target.ici_gbps) {
    out.push_back("data parallel over " + devices + ": ring all-reduce of the gradients over " +
                  c.target.Interconnect(options.chips) + " at " +
                  (c.cal.ici_share == 0.5 ? std::string("half the")
                                          : FormatFixed(c.cal.ici_share * 100, 0) + "% of the") +
                  " bidirectional bandwidth, not overlapped");
  } else if (c.Devices() > 1 && !c.target.ici_gbps) {
    out.push_back("data parallel over " + devices + ": " + c.target.name +
                  "'s interconnect bandwidth is not known, so the gradient all-reduce is not "
                  "counted (the step time is a lower bound)");
  }
  const Parallelism& p = c.parallel;
  if (p.fsdp > 1 || p.tensor > 1 || p.context > 1) {
    // A context group under the distributed optimizer keeps whole weights (Megatron): nothing is
    // divided then, and the optimizer's own line says how its state is.
    const double shards = c.StateShards() * c.Stages();
    const std::string state = !options.train ? "parameters"
                              : options.distributed_optimizer
                                  ? "parameters and gradients"
                                  : "parameters, gradients and optimizer state";
    out.push_back(
        "parallelism " + ToString(p) + ": " + state +
        (shards > 1 ? " divided over " + FormatFixed(shards, 0) + " chips"
                    : std::string(" whole on every chip")) +
        (p.pipeline > 1 ? std::string(" (with the pipeline's stages)") : std::string()) +
        (p.fsdp > 1 ? "; FSDP all-gathers the parameters forward and backward and "
                      "reduce-scatters the gradients over " +
                          c.target.Interconnect(options.chips) + ", overlapped with compute"
                    : "") +
        (p.tensor > 1 ? "; tensor parallelism divides each op and the activations " +
                            std::to_string(p.tensor) +
                            " ways and all-reduces each layer's activations twice forward" +
                            (options.train ? std::string(" and twice backward") : std::string()) +
                            ", not overlapped"
                      : ""));
  }
  if (p.context > 1) {
    out.push_back(
        "context parallelism over " + std::to_string(p.context) + " devices: each holds 1/" +
        std::to_string(p.context) +
        " of every sequence (balanced over the causal mask, as MaxText's load balancing "
        "reorders it) and does that share of every op; " +
        (options.ring_context
             ? std::string("each attention passes the sequence's keys and values around "
                           "the group's ring a chunk at a time over ")
             : std::string("each attention gathers the whole sequence's keys and "
                           "values over ")) +
        c.target.Interconnect(options.chips) +
        (options.train
             ? std::string(!RematPerLayer(c.remat) || options.keep_attention_output
                               ? ", forward and backward"
                               : ", forward, in the recomputed forward and backward") +
                   ", where their gradients " +
                   (options.ring_context ? "travel the ring with them" : "are reduce-scattered")
             : "") +
        (options.ring_context
             ? ", two chunks held at a time and each pass beside the attention on the "
               "chunk already there, which hides it as far as the attention lasts"
             : ", not overlapped") +
        "; the parameters are sharded over the context axis like FSDP");
  }
  if (options.lora_rank > 0) {
    const LoraTargets t = options.lora_targets;
    out.push_back(
        "LoRA of rank " + std::to_string(options.lora_rank) + " on " +
        std::to_string(c.lora.count) + " dense weight matmuls of the layers (" +
        (t == LoraTargets::kAll         ? "the attention's projections and the MLP's"
         : t == LoraTargets::kAttention ? "the attention's Q, K, V and O projections"
                                        : "the attention's Q, K and V projections") +
        "; " + FormatFixed(c.lora.params / 1e6, 1) +
        "M adapter parameters trained in fp32 with their optimizer state, the weights "
        "frozen in 16 bits): every frozen weight matmul's backward computes the data "
        "gradient alone, and each adapter reads its matmul's input again and adds its product "
        "into the output in three kernels; model FLOPs count two passes, not three");
  }
  if (options.vocab_tiles > 1) {
    out.push_back("loss head in " + std::to_string(options.vocab_tiles) +
                  " chunks of tokens (MaxText's num_vocab_tiling): one chunk's logits live at a "
                  "time, and the head's forward runs again for each chunk's gradient");
  }
  if (options.distributed_optimizer) {
    out.push_back(
        "distributed optimizer (Megatron-core, ZeRO-1): " +
        std::string(c.ModelWeightBytes() == 1
                        ? "fp8 weights (the FP8 recipes' fp8_param_gather: gathered at 1 byte a "
                          "parameter) and 16-bit gradients"
                        : "16-bit weights and gradients") +
        " whole on each replica, the fp32 master weights and optimizer state divided over its " +
        std::to_string(p.data * p.context) +
        " data and context replicas; gradients reduce-scattered and weights all-gathered behind "
        "one micro-batch's compute" +
        (p.context > 1 ? std::string("; the context group keeps whole weights") : std::string()));
  }
  if (p.pipeline > 1) {
    const double bubble = (p.pipeline - 1.0) / p.virtual_stages / options.micro_batches;
    out.push_back(
        "pipeline parallelism over " + std::to_string(p.pipeline) + " stages" +
        (p.virtual_stages > 1
             ? " of " + std::to_string(p.virtual_stages) + " interleaved chunks each"
             : std::string()) +
        ", " + std::to_string(options.micro_batches) + " micro-batches a step (1F1B" +
        (p.virtual_stages > 1 ? std::string(", interleaved") : std::string()) +
        "): each stage holds 1/" + std::to_string(p.pipeline) +
        " of the layers' state (the embedding and the output head counted on the most loaded "
        "one, with their work), the pipe's fill and drain idle it " +
        FormatFixed(bubble * 100, 0) +
        "% of the micro-batches' time, its first stage keeps the activations of " +
        FormatFixed(c.InFlightMicroBatches(), 2) +
        " micro-batches in flight; each sends one layer boundary's activations to the next " +
        "stage and their gradients back over " + c.target.Interconnect(options.chips) +
        (p.virtual_stages > 1 ? ", overlapped with compute" : ", not overlapped"));
  } else if (options.micro_batches > 1) {
    out.push_back(std::to_string(options.micro_batches) +
                  " micro-batches a step (gradient accumulation): the layers' work and "
                  "collectives run once per micro-batch, the optimizer update and the gradient "
                  "all-reduce once; memory holds one micro-batch's activations");
  }
  if (c.facts.grouped_experts &&
      (c.cal.grouped_tile_rows > 0 || c.cal.grouped_matmul_efficiency < 1)) {
    const Calibration& cal = c.cal;
    out.push_back(
        "dropless experts as grouped-matmul kernels" +
        (cal.grouped_tile_rows > 0 && cal.grouped_tile_cols > 0
             ? " in tiles of " + FormatFixed(cal.grouped_tile_rows, 0) + " tokens by " +
                   FormatFixed(cal.grouped_tile_cols, 0) +
                   " outputs, each tile streaming its expert's weights again and each column "
                   "block the tokens again"
             : std::string()) +
        (cal.grouped_matmul_efficiency < 1
             ? ", at " + FormatFixed(cal.grouped_matmul_efficiency, 2) +
                   " of the matmul efficiency (fitted to published MoE runs: the calibration's "
                   "source)"
             : std::string()));
  }
  // A judgement from published runs (docs/cost-model.md, "Session 29"): the estimate is close to
  // Megatron's current MoE stack, not to its older unfused one.
  if (c.facts.grouped_experts && !c.target.is_tpu() && options.train) {
    out.push_back(
        "dropless experts on a GPU as the current Megatron-core stack runs them: fused "
        "grouped-MLP kernels (activation and quantization in the matmuls' epilogues) and "
        "dispatch without host synchronisation under CUDA graphs; stacks without them (NeMo "
        "26.04 and earlier) ran fine-grained MoE models 1.4-1.6x slower in Megatron-Bridge's "
        "published tables");
  }
  if (p.expert > 1) {
    out.push_back(
        "expert parallelism over " + std::to_string(p.expert) + " devices: they split the batch " +
        "like data replicas and each holds 1/" + std::to_string(p.expert) + " of every MoE " +
        "layer's experts (" +
        (c.facts.expert_params >= 1e9 ? FormatFixed(c.facts.expert_params / 1e9, 2) + "B"
                                      : FormatFixed(c.facts.expert_params / 1e6, 2) + "M") +
        " expert parameters in all); each MoE layer sends the tokens routed to other devices' "
        "experts and takes the results back by all-to-alls" +
        (options.dedup_expert_dispatch
             ? std::string(" (each token once to each device and host holding one of its "
                           "experts, hosts forwarding over NVLink: DeepEP, HybridEP)")
             : std::string(" (one copy per routed expert)")) +
        " over " + c.target.Interconnect(options.chips) +
        " at each device's link bandwidth (perfectly balanced routing; a torus's bisection can "
        "make the exchange slower), " +
        (!options.train           ? std::string()
         : RematPerLayer(c.remat) ? std::string("forward, backward and in the recomputed forward, ")
                                  : std::string("forward and backward, ")) +
        (options.overlap_expert_comm
             ? std::string("each micro-batch's exchanges run beside another micro-batch's "
                           "compute, which hides them as far as it lasts")
             : std::string("not overlapped with the experts, which wait for their tokens")));
  }
  if (options.slices > 1 && options.dcn == DcnParallelism::kFsdp) {
    out.push_back(std::to_string(options.slices) + " slices sharing the training state by FSDP: " +
                  (c.target.dcn_gbps
                       ? "each chip exchanges its shard with its peers in the other slices over "
                         "DCN at " +
                             FormatFixed(*c.target.dcn_gbps, 2) +
                             " GB/s per chip for the weight all-gathers and the gradient "
                             "reduce-scatter, overlapped with the step"
                       : c.target.name +
                             "'s DCN bandwidth is not known, so the traffic between slices is "
                             "not counted (a lower bound)"));
  } else if (options.slices > 1) {
    out.push_back(std::to_string(options.slices) + " slices, data parallel between them: " +
                  (c.target.dcn_gbps
                       ? "each chip all-reduces its gradient shard over DCN at " +
                             FormatFixed(*c.target.dcn_gbps, 2) +
                             " GB/s per chip, overlapped with the backward pass"
                       : c.target.name +
                             "'s DCN bandwidth is not known, so the all-reduce between slices "
                             "is not counted (a lower bound)"));
  }
  if (options.train && options.remat != Remat::kNone) {
    if (RematPerLayer(c.remat)) {
      out.push_back("rematerialisation per layer: each of the " + std::to_string(c.layers.count) +
                    " layers keeps the tensors that leave it" +
                    (c.remat == Remat::kOffload
                         ? " in host memory (" + FormatBytes(c.layers.boundary_bytes) +
                               " offloaded per step, the transfers assumed hidden behind compute)"
                         : std::string()) +
                    ", and runs its forward pass again in the backward pass" +
                    (c.remat == Remat::kOffload && c.facts.any_attention_projection
                         ? " except its attention projections (Q, K, V, O), whose outputs come "
                           "back from host memory too (MaxText's offload policies)"
                         : std::string()) +
                    (options.keep_attention_output
                         ? std::string("; each also keeps its attention's output (") +
                               (c.remat == Remat::kOffload ? "in host memory" : "on the device") +
                               ": MaxText's remat_policy=custom with context kept), so the "
                               "attention kernels do not run again"
                         : std::string()) +
                    (c.remat == Remat::kLayer
                         ? "; the gradients take the place of the kept layer inputs as the "
                           "backward pass frees them, so only what they exceed them by counts"
                         : std::string()));
    } else {
      out.push_back(
          std::string(c.remat == Remat::kDotsExceptMlpUp
                          ? "rematerialisation `save_dot_except_mlpwi` (MaxText's): "
                      : options.remat != Remat::kDots
                          ? "the graph names no layers (node scopes), so --remat layer is "
                            "estimated as `dots`: "
                          : "rematerialisation `dots`: ") +
          "the inputs of matmuls and convolutions are kept, the ops between them run again in "
          "the backward pass" +
          (c.remat == Remat::kDotsExceptMlpUp
               ? ", and so do the MLPs' up-projections, whose products the down-projections' "
                 "inputs are not kept (the attention is not run again: as for `dots`)"
               : std::string()));
    }
  }
  if (options.serve && c.cal.serving_reserved_bytes) {
    out.push_back("usable HBM = " + FormatFixed(e.hbm_bytes / kGiB, 1) + " GiB per device less " +
                  FormatFixed(*c.cal.serving_reserved_bytes / kGiB, 1) +
                  " GiB the serving runtime holds (its context and workspaces; the KV cache is "
                  "one pool)");
  } else {
    out.push_back("usable HBM = " + FormatFixed(c.cal.usable_hbm_share * 100, 0) + "% of " +
                  FormatFixed(e.hbm_bytes / kGiB, 1) +
                  " GiB per device; max batch extrapolates activation memory linearly");
  }
  if (e.unknown_ops > 0 && !e.coverage_warning)
    out.push_back(Plural(e.unknown_ops, "op has", "ops have") + " no cost model and count as zero");
  if (options.serve) out.push_back(ServingAssumption(c));
  if (!options.usd_per_chip_hour && c.target.price_usd_per_chip_hour &&
      !c.target.price_includes_host)
    out.push_back("price: " + c.target.name +
                  "'s list price is the accelerator's alone; the host VM it is attached to is "
                  "billed on top and not included (pass --price with both to compare with a "
                  "TPU's chip-hour, which includes its host)");
  return out;
}

}  // namespace tpudoctor

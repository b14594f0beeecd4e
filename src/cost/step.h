// The stages of one step estimate and what they share. EstimateStep (estimate.cc) derives the
// per-op costs, graph facts and fusion plan once, builds a StepContext, and runs the stages in
// order: time (coverage.cc, time.cc), step assembly (step.cc), memory (memory.cc, with the
// schedule in liveness.cc and what autodiff saves in saved_tensors.cc), fit, price (pricing.cc)
// and the assumptions the report prints (assumptions.cc). Private to src/cost.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/cost/graph_facts.h"
#include "src/cost/rates.h"
#include "src/cost/saved_tensors.h"
#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/cost/fusion.h"

namespace tpudoctor {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Everything the phases of one estimate share: the inputs, the per-op costs and graph facts.
// The layers node scopes name (LayerKey) and the bytes of the tensors that cross from one layer
// into another: what per-layer rematerialisation keeps, and what tensor parallelism all-reduces.
struct Layers {
  int count = 0;
  double boundary_bytes = 0;
  // Elements of the largest weight tensor a layer reads: FSDP gathers weights one at a time.
  double largest_weight = 0;
  // Elements of the weights the layers read (the rest — embeddings, the output head — sit
  // outside them): what pipeline stages divide.
  double layer_params = 0;
};

// What the stages derive from the graph on one target, kept with the graph's other derived facts
// (EstimateCache) for the next estimate: a plan's candidates share it.
struct TargetMemo {
  std::map<std::string, Layers> layers;  // by target name
  // By target, calibration, the width a weight matmul keeps its input at and the LoRA targets
  // (-1: none).
  std::map<std::tuple<std::string, const Calibration*, int, int>, SavedTensors> saved;
};

// LoRA's adapters (EstimateOptions::lora_rank, lora_targets): how many, and their parameters.
struct LoraAdapters {
  int count = 0;
  double params = 0;
};

struct StepContext {
  const Graph& graph;
  const TargetSpec& target;
  const EstimateOptions& options;
  const Calibration& cal;
  int element_bytes;
  Rates rates;
  const std::vector<OpCost>& costs;
  const GraphFacts& facts;
  Parallelism parallel;  // resolved against the devices
  Layers layers;
  Remat remat = Remat::kNone;  // what runs: kLayer becomes kDots on a graph without layers
  int devices_per_chip = 1;    // 2 on v2/v3 (TensorCores) and TPU7x (chiplets)
  Runtime runtime;             // resolved (never auto): one kernel per op, or fused kernels
  const std::optional<FusionPlan>& fusion;  // the kernels XLA / torch.compile form (not eager)
  const std::vector<bool>& written;         // per ValueId: a fused kernel writes it to HBM
  TargetMemo* memo = nullptr;               // set by EstimateStep: what estimates of it derived
  LoraAdapters lora{};                      // set by EstimateStep: CountLoraAdapters()
  // The devices a framework sees: the unit of batch, memory, rates and parallel degrees.
  int Devices() const { return options.chips * devices_per_chip; }
  // The devices that shard the weights and gather them for use: FSDP and the context group
  // (MaxText's `embed` rule); under the distributed optimizer (Megatron) the context group keeps
  // whole weights.
  int WeightGatherGroup() const {
    return parallel.fsdp * (options.distributed_optimizer ? 1 : parallel.context);
  }
  // How many ways the weights and gradients are sharded: the gather group x tensor parallelism,
  // and over the slices too when they share it by FSDP.
  double StateShards() const {
    return static_cast<double>(WeightGatherGroup()) * parallel.tensor *
           (options.dcn == DcnParallelism::kFsdp ? options.slices : 1);
  }
  // Megatron's distributed optimizer trains 16-bit model weights and gradient buffers (gradients
  // reduced in the weights' dtype: grad_reduce_in_fp32 off, its default) beside the fp32 master
  // copy in the sharded optimizer.
  bool MegatronLayout() const {
    return options.distributed_optimizer && options.train && element_bytes == 2 &&
           options.precision != Precision::kMixed && options.precision != Precision::kBf16Params;
  }
  // Bytes of a model weight as the step keeps and gathers it: Megatron's FP8 recipes keep the
  // weights themselves in fp8 and gather them so (fp8_param_gather: every fp8 recipe of
  // Megatron-Bridge's training/mixed_precision.py sets it, as NeMo's MLPerf GPT-3 sets
  // FP8_PARAMS), one byte; else the compute dtype's under the Megatron layout, fp32's otherwise.
  double ModelWeightBytes() const {
    if (MegatronLayout() && options.precision == Precision::kFp8) return 1;
    return options.precision == Precision::kFp32 ? 4 : 2;
  }
  // Bytes of a gradient as the step keeps and reduces it.
  double GradientBytes() const {
    return options.precision == Precision::kMixed || options.precision == Precision::kBf16Params ||
                   MegatronLayout()
               ? 2
               : 4;
  }
  // The share of the parameter state a device keeps of the `param_count` parameters
  // StateShards leaves it, for the optimizer state and fp32 master weights: the experts' 1/ep and
  // the rest (ExpertStateShare); under the distributed optimizer that state is divided further
  // over the data replicas, the context group and the expert axis (the dense parameters' data
  // group spans the expert axis; the experts' own, each expert's data replicas), so every
  // parameter's share is 1 / (data x context x expert).
  double OptimizerShare(double param_count) const {
    if (!options.distributed_optimizer) return ExpertStateShare(param_count);
    return 1.0 / (static_cast<double>(parallel.data) * parallel.context * parallel.expert);
  }
  // Bytes of an activation element as the step moves it: the compute dtype's (bf16 for a
  // compiled program, whose dtypes are its own).
  double ActivationBytes() const { return element_bytes > 0 ? element_bytes : 2; }
  // Bytes of a weight as a server holds and reads it: 8-bit checkpoints (fp8, int8, int8w:
  // ModelOpt, vLLM, TensorRT-LLM and JetStream's) one, others the compute dtype's width (no fp32
  // copy).
  double ServedWeightBytes() const {
    return EightBitWeights(options.precision) ? 1 : ActivationBytes();
  }
  // Whether node `n` is a weight matmul LoRA froze (all of them, under LoRA): its backward
  // computes no weight gradient.
  bool FrozenWeight(std::size_t n) const { return options.lora_rank > 0 && facts.weight_matmul[n]; }
  // Whether node `n` has a LoRA adapter beside it (EstimateOptions::lora_targets).
  bool Adapted(std::size_t n) const {
    if (options.lora_rank <= 0 || facts.lora_width[n] <= 0) return false;
    switch (options.lora_targets) {
      case LoraTargets::kAll:
        return true;
      case LoraTargets::kAttention:
        return facts.attention_projection[n];
      case LoraTargets::kQkv:
        return facts.attention_input_projection[n];
    }
    return false;
  }
  // The adapters Adapted() places (none without LoRA).
  LoraAdapters CountLoraAdapters() const {
    LoraAdapters out;
    if (options.lora_rank <= 0) return out;
    for (std::size_t i = 0; i < facts.lora_width.size(); ++i) {
      if (!Adapted(i)) continue;
      ++out.count;
      out.params += options.lora_rank * facts.lora_width[i];
    }
    return out;
  }
  // The parameters that train (all of them, or LoRA's adapters) over the model's.
  double TrainableShare(double param_count) const {
    return options.lora_rank > 0 && param_count > 0 ? lora.params / param_count : 1;
  }
  // Seconds to move `bytes` through HBM at the calibrated share of its bandwidth.
  double MemorySeconds(double bytes) const {
    return bytes / (rates.bandwidth * cal.memory_efficiency);
  }
  // Bytes of the tokens a device dispatches to the experts and takes back per micro-batch on a
  // stage (one copy per routed expert), in the compute dtype; a context group's devices each route
  // their share of the sequence.
  double ExpertExchangeBytes() const {
    return facts.expert_exchange_elements * ActivationBytes() / parallel.context / Stages();
  }
  // How many devices share one replica's work (its ops and activations): tensor x context.
  double WorkSplit() const { return static_cast<double>(parallel.tensor) * parallel.context; }
  // Pipeline stages (1 without pipeline parallelism).
  double Stages() const { return parallel.pipeline; }
  // The parameters the most loaded pipeline stage holds: its 1/stages of the layers' and the
  // ones outside the layers (the embedding and the output head sit on the first and last stage;
  // counted together, an upper bound). `count` without pipeline parallelism.
  double StageParams(double count) const {
    if (parallel.pipeline <= 1 || layers.layer_params <= 0) return count;
    const double layered = std::min(layers.layer_params, count);
    return layered / parallel.pipeline + (count - layered);
  }
  // Micro-batches whose activations the first pipeline stage holds at once under 1F1B: one per
  // stage (at most the micro-batches there are), times 1 + (stages - 1) / (stages x chunks) with
  // interleaving (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
  // Transformer Models", its section on pipeline parallelism). 1 without pipeline parallelism.
  double InFlightMicroBatches() const {
    if (parallel.pipeline <= 1) return 1;
    const double p = parallel.pipeline, v = parallel.virtual_stages;
    const double in_flight = std::min(p, static_cast<double>(options.micro_batches));
    return in_flight * (v > 1 ? 1 + (p - 1) / (p * v) : 1);
  }
  // Of the state StateShards leaves a device, the share expert parallelism keeps: the experts'
  // 1/expert and all the rest (1 without expert parallelism).
  double ExpertStateShare(double param_count) const {
    if (parallel.expert <= 1 || param_count <= 0) return 1;
    return 1 - facts.expert_params / param_count * (1 - 1.0 / parallel.expert);
  }
};

// The layers node scopes name, the bytes crossing between them, the largest layer's weights.
Layers FindLayers(const Graph& g, const TargetSpec& target, int eb, const GraphFacts& facts);

// One kernel's (an eager op's) time. Only the slowest ten get the report's names (NodeTime, made
// by TopNodes), so the thousands of candidates a plan times copy no strings.
struct KernelTime {
  NodeId node = kNoNode;
  std::size_t fused = 0;  // how many more ops the kernel fused ("+N" after the node's op)
  double ms = 0;          // forward (and, when training, backward)
  bool compute_bound = false;
  double mxu_utilization = 1;  // useful / padded FLOPs (matrix ops on TPUs)
};

struct ForwardBackward {
  double forward_s = 0;
  double forward_vector_s = 0;  // of which ops other than matmuls and convolutions
  // Of the forward time, what runs inside the model's layers (node scopes): what per-layer
  // rematerialisation runs again (the embedding and the output head are not in a layer).
  double layer_forward_s = 0;
  double layer_forward_vector_s = 0;
  double backward_s = 0;
  // Of the forward and backward time, the attention kernels' (a ring's key/value passes hide
  // behind them: EstimateOptions::ring_context); of the forward alone, theirs.
  double attention_s = 0;
  double attention_forward_s = 0;
  double mlp_up_forward_s = 0;  // the MLPs' up-projections (GraphFacts::mlp_up), forward
  double useful_flops = 0;      // forward, unpadded
  std::vector<KernelTime> times;
};

struct Parameters {
  double count = 0;    // elements of the float initializers
  double tensors = 0;  // how many there are
  // Of `count`, the tables whose every user gathers rows from them (an untied embedding; a tied
  // one is also the head's matmul operand): a decode step reads a row a sequence, not the table.
  double gathered_only = 0;
  double adafactor_state = 0;
  double constant_bytes = 0;  // literals stored in the program (Node::IsStoredConstant)
};

struct ActivationBytes {
  double natural_total = 0;  // before tiling
  double layout_total = 0;   // in the target's tiled layout
};

// Coverage (coverage.cc): counts the ops no cost model covers into the estimate, and the warning
// when they are more than a few percent.
void CountCoverage(const StepContext& c, Estimate& e);
std::optional<std::string> CoverageWarning(const Estimate& e);

// Time (time.cc): forward and backward seconds, op by op (eager) or kernel by kernel (fused).
ForwardBackward TimeForwardBackward(const StepContext& c, Estimate& e);
// The share of the peak a fused attention kernel reaches: the kernel's on this target where
// --attention-kernel names one (EstimateStep has checked the target lists it), else the runtime
// calibration's attention_efficiency (its matmul efficiency where it states none).
double AttentionEfficiency(const StepContext& c);
// Seconds of a kernel with a matrix op, from its compute and memory seconds: the longer, plus the
// part of the shorter the calibration's matrix_memory_overlap says a matmul does not hide (a
// convolution hides all of it).
double MatrixKernelSeconds(const StepContext& c, bool has_matmul, double compute_s,
                           double memory_s);
// Whether depthwise convolutions run on the calibration's own depthwise kernels (not fp16 ones,
// which PyTorch hands to cuDNN).
bool OwnDepthwiseKernels(const StepContext& c);
// Whether the step runs on a GPU under XLA.
bool XlaOnGpu(const StepContext& c);
// Whether a convolution runs channels-last on the tensor cores: the calibration has a factor for
// it (GPU runtimes), and --channels-last asked for it or XLA lays it out so — XLA's GPU layout
// assignment (HeuristicLayoutAssignment) puts 16-bit 2-D convolutions in NHWC on Volta and later,
// which every GPU target is, and keeps fp32 ones NCHW.
bool ChannelsLastConv(const StepContext& c, const Node& conv);
// Whether a node runs inside a kernel the eager framework fuses (attention, GELU/SiLU) rather than
// as a kernel of its own.
bool InsideFusedKernel(const StepContext& c, std::size_t node);

// Memory (memory.cc): the float parameters; bytes per chip; whether it fits and the largest batch
// that would.
Parameters CountParameters(const Graph& graph);
void MemoryPerChip(const StepContext& c, const Parameters& params, Estimate& e);
void FitAndMaxBatch(const StepContext& c, Estimate& e);

// Liveness (liveness.cc): the activation bytes live at the schedule's peak.
ActivationBytes LiveActivations(const StepContext& c, Estimate& e, double& largest);

// Step assembly (step.cc): forward + backward + optimizer update + gradient all-reduce.
void AssembleStep(const StepContext& c, const ForwardBackward& fb, const Parameters& params,
                  Estimate& e);

// Price (pricing.cc): what the step, an epoch and an hour cost.
void Prices(const StepContext& c, Estimate& e);

// Serving (serving.cc), after the inference step of one prompt is priced: time to first token,
// the decode step of every sequence in flight, tokens per second and dollar, the KV cache.
// Errors: a graph without attention ops (a decoder's KV cache is read off them).
Result<Ok> EstimateServing(const StepContext& c, const Parameters& params, Estimate& e);
// Seconds a device takes to exchange `bytes` of routed tokens (one copy per routed expert, sent
// to the experts and taken back) over its expert-parallel group, as the training step's
// collectives cost it (sharding.h): NVLink/ICI within a host, the network to peers on other
// hosts, once per destination with --dedup-expert-dispatch.
double ExpertExchangeSeconds(const StepContext& c, double bytes);
// The bytes of a device of `hbm_bytes` a served model may fill: all but the runtime's reserve
// where the calibration states one (Calibration::serving_reserved_bytes), else the training
// share.
double ServingUsableBytes(const StepContext& c, double hbm_bytes);

// The assumptions the report prints (assumptions.cc), each stage's in its words.
std::vector<std::string> Assumptions(const StepContext& c, const Estimate& e);

}  // namespace tpudoctor

// Estimate: memory, step time, throughput and cost of one training or inference step of a model
// on one target, from the per-op costs (op_cost.h) and a few calibrated efficiency factors
// (data/calibration/*.json, fitted to measured runs; see docs/cost-model.md).
//
// The model, in short: the graph runs as kernels, each taking max(compute time, memory time) plus
// a per-kernel launch overhead; matrix work runs at `matrix_efficiency` of the target's peak (after
// MXU tile padding on TPUs), traffic at `memory_efficiency` of its bandwidth. How ops become
// kernels is the execution model (Runtime): eager frameworks launch one kernel per op, XLA and
// torch.compile fuse them (fusion.h) and pay only the bytes crossing each fused kernel. Training
// is forward + backward (`backward_ratio` x the forward work) + the optimizer update
// (bandwidth-bound over the parameter state). Memory is weights + gradients + optimizer state + the
// activations autograd keeps + the peak of transient buffers. Every result carries the assumptions
// it used.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/ir/graph.h"
#include "tpudoctor/support/result.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {

enum class Optimizer : std::uint8_t { kSgd, kMomentum, kAdam, kAdafactor };
// kBf16 and kFp16: autocast with fp32 master weights (fp16 with loss scaling); kMixed: bf16 weights
// and gradients with an fp32 master copy in the optimizer; kBf16Params: everything in bf16 with no
// fp32 copy (MaxText's weight_dtype=bfloat16: 8 bytes per parameter with Adam instead of 16);
// kFp8: as kBf16, with the matmuls' operands quantized to fp8 and run at the chip's fp8 rate
// (MaxText's quantization=fp8, Transformer Engine); kInt8: as kBf16, with the weight matmuls'
// forward, data-gradient and weight-gradient products quantized to int8 with scales computed each
// step and run at the chip's int8 rate (MaxText's quantization=int8: AQT).
// kInt8Weights: weight-only int8 for serving (MaxText's int8w; jetstream-pytorch's and vLLM's
// W8A16 checkpoints): 1-byte weights, read and dequantized to bf16 for bf16 matmuls.
enum class Precision : std::uint8_t {
  kFp32,
  kBf16,
  kFp16,
  kMixed,
  kBf16Params,
  kFp8,
  kInt8,
  kInt8Weights
};

// Whether the weight matmuls run on 8-bit operands (fp8 or int8): one byte an operand element,
// attention kernels kept in bf16.
bool EightBitMatmuls(Precision p);
// Whether the weights are stored and read at one byte (fp8, int8, int8w).
bool EightBitWeights(Precision p);
// Why a training step cannot run at `p` (int8w is weight-only int8 for serving and inference),
// or nullopt.
std::optional<std::string> TrainingPrecisionRefusal(Precision p);

std::optional<Optimizer> ParseOptimizer(
    std::string_view name);  // sgd, momentum, adam, adamw, adafactor
// fp32, bf16, fp16, fp8, int8, mixed, bf16-params
std::optional<Precision> ParsePrecision(std::string_view name);
const std::vector<std::string>& PrecisionNames();  // every name ParsePrecision takes
std::string PrecisionChoices();                    // the names for messages, "a, b or c"
// Bytes per element of a --kv-cache-dtype name ("bf16", "fp16", "fp8", "int8"); nullopt for
// another name.
std::optional<int> KvCacheDtypeBytes(std::string_view name);
const std::vector<std::string>& KvCacheDtypeNames();  // every name KvCacheDtypeBytes takes
std::string KvCacheDtypeChoices();                    // the names for messages, "a, b or c"
// The length a bucketed prefill pads a prompt of `tokens` to: the next power of two, at least 16.
std::int64_t PrefillBucket(std::int64_t tokens);

std::string_view NameOf(Optimizer o);
std::string_view NameOf(Precision p);

// How a slice's chips share one training step. Compute replicas = chips / tensor: each processes
// `EstimateOptions::batch` samples. `data` replicas keep a full copy of their state (gradients
// all-reduced); `fsdp` chips divide parameters, gradients and optimizer state (ZeRO-3: parameters
// all-gathered per layer forward and backward, gradients reduce-scattered); `tensor` chips divide
// each layer's matmuls, activations and state (Megatron-style, one all-reduce of the layer's
// activations after the attention and the MLP, forward and backward). data x fsdp x tensor x
// expert x context = chips; a degree left 0 is what remains.
struct Parallelism {
  int data = 0;
  int fsdp = 1;
  int tensor = 1;
  // Expert parallelism (MaxText's ici_expert_parallelism, GShard): the devices of an expert
  // group split the batch like data replicas and each holds 1/expert of every MoE layer's
  // experts; the routed tokens go to their experts' devices and back by all-to-alls.
  int expert = 1;
  // Context parallelism (MaxText's ici_context_parallelism, all-gather form, load-balanced): the
  // devices of a context group split each sequence, every op's work and the activations; each
  // gathers the whole sequence's keys and values for its attention (forward, and again with
  // their gradients reduce-scattered backward). The state is sharded over them like FSDP.
  int context = 1;
  // Pipeline parallelism (Megatron's pipeline_model_parallel_size, 1F1B schedule): the layers are
  // cut into `pipeline` stages of consecutive layers, one per device group; a replica's batch runs
  // as EstimateOptions::micro_batches micro-batches that flow through the stages, each stage
  // holding its layers' state and sending its activations to the next stage (their gradients
  // back). Filling and draining the pipe idles every stage (pipeline - 1) / virtual_stages
  // micro-batch slots a step.
  int pipeline = 1;
  // The interleaved 1F1B schedule (Megatron's virtual_pipeline_model_parallel_size): each device
  // holds `virtual_stages` chunks of non-adjacent layers, which divides the bubble by it and
  // multiplies the stage-to-stage sends by it. 1: one chunk a device.
  int virtual_stages = 1;
  bool operator==(const Parallelism&) const = default;
};
// `data=2,fsdp=16,tp=4,ep=8,cp=2,pp=4,vp=2` (keys data|dp, fsdp, tensor|tp, expert|ep,
// context|cp, pipeline|pp, virtual|vp; positive integers).
Result<Parallelism> ParseParallelism(std::string_view text);
std::string ToString(const Parallelism& p);  // "fsdp=16,tp=4" (data shown when > 1)

// Activation rematerialisation (gradient checkpointing): what the forward pass keeps for the
// backward pass, and what it recomputes. kDots keeps the matmul/conv inputs and recomputes the
// pointwise ops between them (JAX's `checkpoint_dots`); kLayer keeps each layer's input and
// recomputes the layer (MaxText's `remat_policy: full`, PyTorch checkpointing per block);
// kOffload is kLayer with the kept layer inputs moved to host memory (MaxText's
// `decoder_layer_input: offload`), the transfers hidden behind compute. kDotsExceptMlpUp is kDots
// less the MLP down-projections' inputs, which the backward pass gets by running the MLP's first
// matmuls (up and gate) again (MaxText's `save_dot_except_mlpwi`).
enum class Remat : std::uint8_t { kNone, kDots, kLayer, kOffload, kDotsExceptMlpUp };
// none, dots (or MaxText's minimal), layer (or full), offload, save_dot_except_mlpwi
std::optional<Remat> ParseRemat(std::string_view name);
const std::vector<std::string>& RematNames();  // the policies' names (NameOf), in that order
std::string RematChoices();  // for messages: "none, dots (minimal), ... or save_dot_except_mlpwi"
// Whether `r` keeps each layer's input and runs the layer again (kLayer, kOffload).
bool RematPerLayer(Remat r);
std::string_view NameOf(Remat r);

// Which of a layer's dense weight matmuls LoRA adapts: all of them (the attention's projections
// and the MLP's: Megatron-Bridge's default target_modules linear_qkv, linear_proj, linear_fc1,
// linear_fc2), the attention's projections (Q, K, V and O), or only Q, K and V (linear_qkv; Hugging
// Face PEFT's Llama default, q_proj and v_proj, adapts a part of them).
enum class LoraTargets : std::uint8_t { kAll, kAttention, kQkv };
std::optional<LoraTargets> ParseLoraTargets(std::string_view name);  // all, attention, qkv
std::string_view NameOf(LoraTargets t);

// How the slices of a multislice job share the step over DCN: data parallel (each slice holds the
// whole training state and the slices all-reduce gradients: MaxText's dcn_data_parallelism) or
// FSDP (the state is sharded over every slice's chips and gathered over DCN too:
// dcn_fsdp_parallelism).
enum class DcnParallelism : std::uint8_t { kData, kFsdp };
std::optional<DcnParallelism> ParseDcnParallelism(std::string_view name);  // data, fsdp
std::string_view NameOf(DcnParallelism d);

// An execution model: how a program runs, which decides how ops become kernels and which
// calibration applies (data/calibration/NAME-FAMILY.json). One row of
// data/calibration/runtimes.tsv each: eager, xla, compiled.
struct ExecutionModel {
  std::string name;
  bool fused = false;  // kernels are a compiler's fusions (fusion.h), not one per op
  std::vector<std::string> default_for;  // "tpu", "xla_program", "gpu": what `auto` picks it for
  std::string description;
};
const std::vector<ExecutionModel>& ExecutionModels();  // in the table's order

// A runtime the user asks for: "auto" (the default) or an execution model. Auto resolves to XLA on
// a TPU (always), and on a GPU to XLA for XLA programs (HLO/StableHLO) and eager for everything
// else (ONNX, torch.export, Keras, TF): the table's default_for column.
class Runtime {
 public:
  Runtime() = default;  // auto
  bool is_auto() const { return index_ < 0; }
  // The execution model; only for a runtime that is not auto.
  const ExecutionModel& model() const {
    return ExecutionModels()[static_cast<std::size_t>(index_)];
  }
  bool operator==(const Runtime&) const = default;

 private:
  friend std::optional<Runtime> ParseRuntime(std::string_view name);
  explicit Runtime(int index) : index_(index) {}
  int index_ = -1;
};
std::optional<Runtime> ParseRuntime(std::string_view name);  // auto, or a row's name
std::string_view NameOf(Runtime r);                          // "auto" or the model's name
// Every name ParseRuntime takes, for messages: "auto, eager, xla or compiled".
std::string RuntimeChoices();

struct Calibration;

class EstimateCache;

// Serving a decoder LLM (`estimate --serve`): requests of `prompt_tokens` in and `output_tokens`
// out, `concurrency` of them in flight at once (continuous batching: the decode step runs one
// token of every sequence in flight). The graph is the model at batch 1 over the prompt.
struct ServingOptions {
  std::int64_t prompt_tokens = 1024;
  std::int64_t output_tokens = 1024;
  std::int64_t concurrency = 1;
  // The KV cache's element type (`--kv-cache-dtype`, vLLM's flag): "" keeps the compute dtype's
  // (bf16, fp32 for an fp32 estimate); "bf16", "fp16" or "fp8" (the engines' fp8 KV cache,
  // quantized per tensor: half the bytes to hold and to read each decode step).
  std::string kv_cache_dtype;
  // The engine's decode kernel reads a grouped-query layer's KV cache once per query head, not
  // once per key/value head (`--kv-reads-per-query-head`): FasterTransformer's masked multi-head
  // attention kernel, one thread block per sequence and query head, which TensorRT-LLM ran for
  // grouped-query models until its XQA kernel (0.7). An upper bound: blocks of one group may
  // share reads in the L2 cache.
  bool kv_reads_per_query_head = false;
  // A static KV cache (`--kv-cache-length N`): every sequence slot holds N tokens of cache and
  // each decode step's attention scores all N of them, masked — the fixed shapes of an XLA engine
  // without a ragged or paged attention kernel (jetstream-pytorch's max_cache_length, MaxText's
  // max_target_length under JetStream). N below a request's length is a rolling window. 0: a
  // paged cache, each sequence holding its own length and reading its own context.
  std::int64_t kv_cache_length = 0;
  // Prefills run one prompt at a time, padded to the next power of two of at least 16 tokens
  // (`--bucketed-prefill`: JetStream's prefill buckets), each reading the weights itself, instead
  // of the round's prompts batched.
  bool bucketed_prefill = false;
  // The data-parallel replicas are one server that splits its decode batch over them and runs
  // each prefill replicated on all of them (`--replicated-prefill`: jetstream-pytorch's
  // --shard_on_batch, whose prefill results are replicated): one stream of prefills for the
  // slice's requests instead of one per replica.
  bool replicated_prefill = false;
  // An offline job of this many requests, all queued at once (`--requests N`: trtllm-bench's
  // dataset, vLLM's benchmark_throughput --num-prompts): the server takes `concurrency` of them
  // (no more than the job has), and with requests of one length they start and finish together,
  // in waves, the last wave of what is left. The throughput is the job's: its output tokens over
  // the time the waves take. 0: steady state, a queue that never empties.
  std::int64_t requests = 0;
  bool operator==(const ServingOptions&) const = default;
};

struct EstimateOptions {
  bool train = false;
  Optimizer optimizer = Optimizer::kAdam;
  Precision precision = Precision::kBf16;
  std::int64_t batch = 1;  // the batch the graph's shapes were made static with
  // A replica's step runs this many micro-batches of `batch` each (gradient accumulation; the
  // micro-batches a pipeline's stages pass along): the work and the collectives of the layers
  // run once per micro-batch, the optimizer update and the gradient all-reduce once a step.
  int micro_batches = 1;
  // Megatron-core's distributed optimizer (use_distributed_optimizer; DeepSpeed's ZeRO-1): 16-bit
  // weights and gradients (grad_reduce_in_fp32 off, its default) on every replica, the optimizer
  // state and fp32 master weights sharded over the data replicas, the context group and the
  // expert axis; the gradients are reduce-scattered over them and the updated weights
  // all-gathered (overlapped with the backward and forward passes), and the context group keeps
  // whole weights and gradients (Megatron's context parallelism, where MaxText shards them).
  bool distributed_optimizer = false;
  // Expert parallelism's token exchange. `dedup_expert_dispatch`: a token crosses to each device
  // once however many of its experts the device holds and, between hosts, to each host once, the
  // host forwarding it over NVLink (DeepEP's and HybridEP's kernels, Megatron's flex dispatcher);
  // otherwise one copy per routed expert (Megatron's alltoall dispatcher, XLA's all-to-all).
  // `overlap_expert_comm` (training): the all-to-alls of one micro-batch run while another
  // computes (Megatron's overlap_moe_expert_parallel_comm, DeepSeek's DualPipe); only what the
  // other micro-batches' compute cannot hide adds to the step.
  bool dedup_expert_dispatch = false;
  bool overlap_expert_comm = false;
  // Context parallelism's keys and values (with cp): `ring_context` passes them around the
  // context group a chunk at a time, each step's send beside the attention on the chunk already
  // there (MaxText's context_parallel_strategy=ring, Megatron's p2p context parallelism, its
  // default): two chunks in flight, and only what the attention kernels cannot hide adds to the
  // step. Otherwise each attention gathers them whole first (MaxText's all_gather, its default).
  bool ring_context = false;
  // GPUs: the fused-attention kernel the model runs (a key of TargetSpec::attention_kernels:
  // `flash-attention-1` ... `cudnn`), at the share of the peak the target lists for it. Empty:
  // the runtime calibration's attention_efficiency.
  std::string attention_kernel;
  // With per-layer remat (`layer`, `offload`): each layer also keeps its attention's output (on
  // the device under `layer`, in host memory under `offload`), so the recomputed forward does not
  // run the attention kernel, nor gather its keys and values, again (MaxText's remat_policy=custom
  // with context=device or offload).
  bool keep_attention_output = false;
  // LoRA fine-tuning (training, rank > 0): the model's weights frozen in 16 bits and a rank-`r`
  // adapter (x A B, A in x r, B r x out) beside the dense weight matmuls of the layers that
  // `lora_targets` names, trained in fp32 with their optimizer state. A frozen matmul's backward
  // computes only the data gradient; an adapter reads its matmul's input again and adds its
  // product into the output.
  int lora_rank = 0;
  LoraTargets lora_targets = LoraTargets::kAll;
  // The loss head computes the logits and their gradient in this many chunks of tokens
  // (MaxText's num_vocab_tiling): one chunk's logits live at a time, and the backward pass runs
  // the head's forward again.
  int vocab_tiles = 1;
  int chips = 1;                               // chips of the slice (tpu-v5e-8: 8)
  Parallelism parallel;                        // how they share the step (default: data parallel)
  int slices = 1;                              // identical slices over DCN (multislice)
  DcnParallelism dcn = DcnParallelism::kData;  // how the slices share the step
  Remat remat = Remat::kNone;
  Runtime runtime;  // auto
  // The framework runs convolutions channels-last (NHWC: PyTorch's
  // `model.to(memory_format=torch.channels_last)`, NVIDIA's `--memory-format nhwc`), so a GPU's
  // tensor cores take them at the precision's rate; else as the calibration says (eager: NCHW).
  bool channels_last = false;
  std::optional<ServingOptions> serve;       // serving figures besides the prefill step
  std::optional<double> dataset_size;        // samples per epoch
  std::optional<double> usd_per_chip_hour;   // overrides the target's price (--price)
  const Calibration* calibration = nullptr;  // overrides the target's calibration
  // Keeps what estimates of one graph share (below); null derives it afresh each time.
  EstimateCache* cache = nullptr;
};

// Whether two option sets ask for the same estimate (everything but the cache is compared).
bool SameStep(const EstimateOptions& a, const EstimateOptions& b);

// What an estimate derives from the graph alone — op costs, structural facts, the fusion plan —
// kept for the next estimate of the same graph at the same widths, runtime kind and step kind
// (a training step's BatchNorms fuse differently): a plan's
// hundreds of candidates (slices, parallelism, remat) derive it once. The graph must outlive the
// cache and not change. Not thread-safe.
class EstimateCache {
 public:
  EstimateCache();
  ~EstimateCache();
  EstimateCache(const EstimateCache&) = delete;
  EstimateCache& operator=(const EstimateCache&) = delete;
  struct Entry;
  const Entry& Get(const Graph& graph, int element_bytes, bool fused, bool train);
  // The op costs an entry of `graph` at `element_bytes` already holds; null when none does.
  const std::vector<OpCost>* FindCosts(const Graph& graph, int element_bytes) const;

 private:
  std::vector<std::unique_ptr<Entry>> entries_;
};

// Efficiency factors of one runtime on a target family (data/calibration/RUNTIME-FAMILY.json),
// or on one generation of it (RUNTIME-TARGET.json: the factors fitted to that generation's
// published runs over its family's).
struct Calibration {
  std::string name;        // "eager-gpu", "xla-gpu", "compiled-gpu", "xla-tpu", "xla-tpu-v6e"
  std::string fitted_for;  // the target a generation's factors were fitted to; empty: the family
  double matrix_efficiency = 0.7;  // achieved share of the peak matmul rate
  // Achieved share of the peak for fused (flash) attention kernels; unset: matrix_efficiency.
  std::optional<double> attention_efficiency;
  // Achieved share of the peak for convolutions; unset: matrix_efficiency (XLA:TPU lowers a
  // convolution onto the MXU as it does a dot product, its padding to the MXU's tiles costed
  // apart, so the two reach the same share of what they use). ConvEfficiency() reads it.
  std::optional<double> conv_efficiency;
  double ConvEfficiency() const { return conv_efficiency.value_or(matrix_efficiency); }
  // Achieved share for depthwise (group = channels) convolutions.
  double depthwise_efficiency = 0.1;
  // Depthwise convolutions are bound by memory, not math, when their kernels are simple loops
  // (PyTorch's native CUDA kernels: cuDNN runs them only in fp16): the achieved share of HBM
  // bandwidth of their inputs and outputs, and their backward time over their forward time.
  // Unset: memory_efficiency and backward_ratio, as for any op.
  std::optional<double> depthwise_memory_efficiency;
  std::optional<double> depthwise_backward_ratio;
  bool fused_attention = false;  // softmax(QK^T)V runs as one fused kernel (PyTorch SDPA, flash)
  // GELU and SiLU run as one kernel each though the export spelled them out (PyTorch's modules).
  bool fused_activations = false;
  double memory_efficiency = 0.8;  // achieved share of HBM bandwidth
  // How much of a kernel's memory time a matmul in it hides (its operands streaming from HBM
  // while the matrix units work): 1, the roofline's max(compute, memory); 0, their sum.
  // Convolution kernels keep the max.
  double matrix_memory_overlap = 1.0;
  double kernel_overhead_us = 0;  // fixed cost per launched kernel (eager frameworks)
  // The host side of an eager step, which the GPU runs asynchronously behind: each launched op
  // costs `host_op_us` of Python, dispatcher and launch work, and each pass of the step loop
  // (forward, backward and optimizer when training; one for inference) `step_overhead_us`. The
  // step takes the longer of host and device time: small steps are bound by the host.
  double host_op_us = 0;
  double step_overhead_us = 0;
  // Backward time over forward time of a kernel. A matmul's or convolution's backward is its
  // two gradient matmuls (data and weights), each of the forward's FLOPs; a fused (flash)
  // attention's recomputes the scores and runs four more matmuls, five against the forward's two
  // (Dao, FlashAttention-2, 2023); `backward_ratio` is the other kernels' (fitted where measured).
  double matrix_backward_ratio = 2.0;
  double attention_backward_ratio = 2.5;
  double backward_ratio = 2.0;
  double saved_activation_share = 0.5;  // share of vector-op forward outputs autograd keeps
  double saved_matrix_share = 1.0;      // share of matmul/conv forward outputs autograd keeps
  // Under fp8, a weight matmul keeps its input for the weight gradient as the fp8 copy it cast for
  // the forward (Transformer Engine's Linear, LayerNormLinear and GroupedLinear save the quantized
  // input, column-wise), one byte an element instead of the compute dtype's.
  bool fp8_saves_quantized_inputs = false;
  bool conv_rate_ignores_precision = false;  // eager NCHW convs run at one rate in fp32 and bf16
  // Convolutions in channels-last (NHWC) layout, which cuDNN runs as implicit GEMMs on the tensor
  // cores: their achieved share of the precision's matrix rate (EstimateOptions::channels_last).
  // Unset where the runtime picks layouts itself (XLA:TPU) or nothing was fitted.
  std::optional<double> channels_last_conv_efficiency;
  // Dropless MoE experts run as grouped-matmul kernels of fixed tiles (on TPUs the Pallas gmm
  // kernels of MaxText's megablox and tokamax, and JAX's ragged dot): each tile of
  // `grouped_tile_rows` routed tokens streams its expert's weights from HBM again, and each
  // output column block `grouped_tile_cols` wide reads the tokens again. 0: the experts' matmuls
  // read their operands once, as any matmul.
  double grouped_tile_rows = 0;
  double grouped_tile_cols = 0;
  // The share of matrix_efficiency those grouped matmuls reach (their kernels' own tiling and
  // pipelining against XLA's dots; fitted per generation where MoE runs were published).
  double grouped_matmul_efficiency = 1.0;
  // How many times, beyond the graph's own ops, a device under expert parallelism reads or writes
  // the tokens it receives and the results it sends back when it holds more than one expert a
  // layer: 2 is the regrouping by local expert and back (a read and a write of each); a runtime's
  // dispatcher may do more (casts of the routed tokens, padding, its own permutations).
  double expert_token_passes = 2.0;
  // The query and key block of the runtime's attention kernels: they compute every pair of each
  // block-by-block tile a causal or local mask reaches into. 0: only the pairs the mask keeps.
  double attention_block = 0;
  double transient_factor = 1.0;  // peak transient buffers, as multiples of the largest tensor
  double fixed_memory_bytes = 0;  // runtime/workspace memory outside the model
  // Share of a device's HBM a program may use (the runtime reserves the rest): XLA:TPU reports
  // about 15.5 of a v5e's 16 GiB usable.
  double usable_hbm_share = 0.95;
  // Bytes of each device a serving engine's runtime holds besides the weights, the KV cache and
  // the activations (the CUDA context, the engine's kernel and collective workspaces). An engine
  // allocates its KV cache as one pool, so the caching allocator's reserve usable_hbm_share
  // stands for in a training step does not apply. Unset: serving uses usable_hbm_share too.
  std::optional<double> serving_reserved_bytes;
  // Share of a chip's listed (bidirectional) ICI bandwidth a ring collective moves data at: each
  // link of the ring carries the data one way.
  double ici_share = 0.5;
  std::string source;
};

// The calibration of a resolved runtime (ResolveRuntime, never auto) on a target: `xla-tpu`,
// `eager-gpu`, ... Matrix FLOPs after padding to the MXU: the output rows to the 8 sublanes, N and
// K to the systolic array's width (unpadded on GPUs). The estimate costs matmuls so; PERF002
// compares it with the useful work.
double PaddedFlops(const MatmulDims& d, const TargetSpec& t);

// The calibration of a runtime on a target: the target's own generation file, else its nearest
// sibling's that has one (TargetSpec::calibration_siblings), else the family's.
const Calibration& CalibrationFor(const TargetSpec& target, Runtime runtime);
// `requested` with auto resolved for a graph on a target (see Runtime); `serving`: the step is a
// served model's (a serving engine runs it, not the training framework's eager loop).
Runtime ResolveRuntime(Runtime requested, const TargetSpec& target, const Graph& graph,
                       bool serving = false);
// A calibration from JSON text (the format of data/calibration/*.json), e.g. fitted to your own
// cluster's measurements; `name` is used in messages.
Result<Calibration> ParseCalibration(std::string_view text, const std::string& name);

struct NodeTime {
  NodeId node = kNoNode;
  std::string node_name;  // so reports need not keep the graph
  std::string op;         // qualified op
  double ms = 0;          // forward (and, when training, backward) time of this node
  bool compute_bound = false;
  double mxu_utilization = 1;  // useful / padded FLOPs (matrix ops on TPUs)
};

struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer_state = 0;
  double master_weights = 0;
  double activations = 0;  // kept for the backward pass (training) or live at the peak (inference)
  double transients = 0;
  double fixed = 0;
  double padding_waste = 0;  // part of the activations that is TPU tile padding
  double total() const {
    return weights + gradients + optimizer_state + master_weights + activations + transients +
           fixed;
  }
};

// The raw totals the factors multiply, so calibration can refit them without re-running.
struct EstimateComponents {
  double matmul_flops = 0;     // padded, forward
  double conv_flops = 0;       // padded, forward
  double depthwise_flops = 0;  // padded, forward
  double depthwise_bytes = 0;  // forward traffic of depthwise convolutions
  double vector_bytes = 0;     // forward traffic of vector and copy ops
  double forward_kernels = 0;  // non-free forward nodes
  double backward_kernels = 0;
  double optimizer_bytes = 0;
  double parameter_tensors = 0;
  double matrix_peak_flops = 0;   // FLOP/s at the chosen precision
  double bandwidth = 0;           // bytes/s
  double state_bytes = 0;         // weights + gradients + optimizer state + master weights
  double saved_bytes = 0;         // forward outputs of vector ops (before the saved share)
  double saved_matrix_bytes = 0;  // forward outputs of matmul/conv ops
  double largest_tensor_bytes = 0;
  double live_peak_bytes = 0;  // inference: peak of live activations
};

// What serving costs on a slice (one model replica per tensor-parallel group): the prefill of a
// prompt, the decode step of every sequence in flight, and what they make per chip and dollar.
struct ServingEstimate {
  double ttft_ms = 0;  // time to first token: one prompt's prefill, its TP all-reduces included
  double tpot_ms = 0;  // time per output token: a decode step and its share of the prefills
  double decode_step_ms = 0;     // one decode step, of which:
  double decode_weights_ms = 0;  // reading the weights
  double decode_kv_ms = 0;       // reading the KV cache of every sequence in flight
  double decode_compute_ms = 0;  // the matmuls and attention (partly hidden by the reads)
  double decode_tensor_ms = 0;   // tensor-parallel all-reduces of the decode step
  double decode_expert_ms = 0;   // expert parallelism's token all-to-alls of the decode step
  double prefill_share = 0;      // of the slice's time, the share spent on prefills
  double mean_context = 0;       // tokens a sequence holds while it decodes, on average (a paged
                                 // cache reads these; a static one kv_cache_length)
  std::int64_t kv_cache_length = 0;  // a static cache's tokens a slot, read whole; 0: paged
  std::int64_t prefill_tokens = 0;   // the length a prompt's prefill runs at (its bucket)
  bool bucketed_prefill = false;     // prefills one prompt at a time rather than batched
  double output_tokens_per_s = 0;    // the slice's, at steady state or over an offline job
  // An offline job (ServingOptions::requests): its requests, the waves a replica runs them in
  // (the last one the remainder), and the seconds they take.
  std::int64_t requests = 0;
  std::int64_t waves = 0;
  double job_s = 0;
  double output_tokens_per_s_per_chip = 0;
  std::optional<double> usd_per_million_output_tokens;
  double kv_bytes_per_token = 0;  // K and V of every layer, for one token (all chips)
  double weight_bytes = 0;        // held per chip (a decode step reads all but an untied embedding)
  double kv_cache_bytes = 0;      // per chip, every sequence in flight at its full length
  bool fits = false;
  std::int64_t max_concurrency = 0;  // sequences in flight whose KV cache still fits
};

struct Estimate {
  std::string target;    // as the user named it (a slice: `v5litepod-16`)
  std::string hardware;  // the target's own name (`tpu-v5e`)
  int chips = 1;
  double step_ms = 0;
  double forward_ms = 0;
  double backward_ms = 0;
  double optimizer_ms = 0;
  double allreduce_ms = 0;  // data-parallel gradient all-reduce (not overlapped)
  double fsdp_ms = 0;       // FSDP all-gathers and reduce-scatters (overlapped with compute)
  double tensor_ms = 0;     // tensor-parallel activation all-reduces (not overlapped)
  double expert_ms = 0;     // expert-parallel token all-to-alls (not overlapped)
  double context_ms = 0;    // context-parallel key/value all-gathers (not overlapped)
  double recompute_ms = 0;  // forward work rematerialisation runs again
  double dcn_ms = 0;        // gradient all-reduce between slices (overlapped with the backward)
  // Pipeline parallelism: the stages' idle slots while the pipe fills and drains, and the
  // activations (forward) and their gradients (backward) each stage sends the next.
  double pipeline_bubble_ms = 0;
  double pipeline_send_ms = 0;
  int micro_batches = 1;                   // per replica and step (EstimateOptions::micro_batches)
  std::optional<ServingEstimate> serving;  // with EstimateOptions::serve
  double host_ms = 0;  // host time of an eager step; the step is bound by it when longer
  int slices = 1;
  Parallelism parallel;  // resolved: data x fsdp x tensor = chips
  Remat remat = Remat::kNone;
  Runtime runtime;                // resolved
  int kernels = 0;                // kernels one forward pass launches (after fusion)
  std::int64_t global_batch = 0;  // samples per step over all chips
  double model_flops = 0;         // useful FLOPs of one step (all chips)
  double mfu = 0;                 // model FLOPs / (step time × peak)
  double samples_per_s = 0;
  MemoryBreakdown memory;  // per chip
  double hbm_bytes = 0;    // per device
  bool channels_minor =
      false;  // some activations were laid out channels-minor (ChannelsMinorValues)
  bool fits = false;
  std::int64_t max_batch = 0;  // per device, largest batch whose memory fits
  std::optional<double> usd_per_hour;
  std::optional<double> usd_per_million_samples;
  std::optional<double> epoch_s;
  std::optional<double> usd_per_epoch;
  // Coverage: nodes with a cost (compute or traffic), and nodes that could not be costed (unknown
  // shapes or no cost model) and count as zero; among those, matmuls, convolutions and RNNs.
  int costed_ops = 0;
  int unknown_ops = 0;
  int unknown_matrix_ops = 0;
  int unknown_shape_ops = 0;                // of unknown_ops: some tensor has no static shape
  std::vector<std::string> no_model_kinds;  // the ops with no cost model (distinct, first few)
  double coverage() const {
    return costed_ops + unknown_ops > 0
               ? static_cast<double>(costed_ops) / (costed_ops + unknown_ops)
               : 1.0;
  }
  // Set when so much of the graph is uncosted that time and memory are lower bounds: more than
  // kUncostedWarnShare of the nodes, or any matmul/convolution.
  std::optional<std::string> coverage_warning;
  EstimateComponents components;
  std::vector<NodeTime> top_nodes;  // slowest first, at most 10
  std::vector<std::string> assumptions;
};

// `graph` must have static shapes (the caller made them so with --batch/--dim).
Result<Estimate> EstimateStep(const Graph& graph, const TargetSpec& target,
                              const EstimateOptions& options);

// Bytes of a tensor in the target's memory layout: TPU (8,128) tiling rules from the target data
// (padding the two minor dims), natural size elsewhere.
// `channels_minor`: a rank-4 NCHW tensor of a convolutional network is laid out with the channels
// minor (XLA's TPU layout assignment puts the feature dim last for convolutions), so the padded
// dims are W and C, not H and W.
std::optional<double> LayoutBytes(const TensorType& type, const TargetSpec& target,
                                  int element_bytes, bool channels_minor = false);

// Which rank-4 values of a network with NCHW (channels-second) convolutions XLA lays out
// channels-minor: the convolution activations. XLA's TPU layout assignment puts the feature dim of
// a convolution's operands and result last, and the elementwise, normalization, pooling and
// concatenation ops fused around it follow. Everything else keeps its row-major layout: dot
// results and attention tensors (a ViT's [batch, heads, tokens, tokens]), reshapes and transposes
// out of the conv world, and graph inputs (an NCHW image batch stays as fed; the first convolution
// transposes it on the device, so a 3-channel input is not a 3-wide minor dim).
// HLO convolutions whose dim_labels put the feature dim last (`b01f`) need no relayout: none.
class ChannelsMinorValues {
 public:
  ChannelsMinorValues() = default;
  explicit ChannelsMinorValues(const Graph& graph);
  bool operator()(const Value& value) const {
    const auto i = static_cast<std::size_t>(value.id);
    return i < minor_.size() && minor_[i];
  }
  bool any() const { return any_; }

 private:
  std::vector<bool> minor_;  // by ValueId of the top-level graph
  bool any_ = false;
};

}  // namespace tpudoctor

#include "tpudoctor/cost/estimate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "src/cost/graph_facts.h"
#include "src/cost/rates.h"
#include "src/cost/saved_tensors.h"
#include "src/cost/sharding.h"
#include "tpudoctor/cost/fusion.h"
#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

constexpr double kUsableHbmShare =
    0.95;  // runtime reservations; XLA reports ~15.5 of 16 GiB usable
constexpr double kGiB = 1024.0 * 1024 * 1024;

bool IsFloat(DType d) { return TraitsOf(d).cls == DTypeClass::kFloat; }

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

// Everything the phases of one estimate share: the inputs, the per-op costs and graph facts.
// The layers node scopes name (LayerKey) and the bytes of the tensors that cross from one layer
// into another: what per-layer rematerialisation keeps, and what tensor parallelism all-reduces.
struct Layers {
  int count = 0;
  double boundary_bytes = 0;
  double largest_parameters = 0;  // elements of the largest layer's weights (FSDP gathers them)
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
  Remat remat = Remat::kNone;         // what runs: kLayer becomes kDots on a graph without layers
  int devices_per_chip = 1;           // 2 on v2/v3 (TensorCores) and TPU7x (chiplets)
  Runtime runtime = Runtime::kEager;  // resolved: one kernel per op, or fused kernels
  const std::optional<FusionPlan>& fusion;  // the kernels XLA / torch.compile form (not eager)
  const std::vector<bool>& written;         // per ValueId: a fused kernel writes it to HBM
  // The devices a framework sees: the unit of batch, memory, rates and parallel degrees.
  int Devices() const { return options.chips * devices_per_chip; }
};

Layers FindLayers(const Graph& g, const TargetSpec& target, int eb, const GraphFacts& facts) {
  Layers out;
  std::map<std::string, double> params;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    const std::string& key = facts.layer[static_cast<std::size_t>(id)];
    if (key.empty()) continue;
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      const Value& v = g.value(in);
      if (v.origin == ValueOrigin::kInitializer && IsFloat(v.type.dtype))
        params[key] += static_cast<double>(v.type.shape.NumElements().value_or(0));
    }
    for (ValueId o : n.outputs) {
      const bool leaves =
          std::any_of(g.value(o).users.begin(), g.value(o).users.end(),
                      [&](NodeId u) { return facts.layer[static_cast<std::size_t>(u)] != key; });
      if (leaves)
        out.boundary_bytes +=
            LayoutBytes(g.value(o).type, target, eb, facts.channels_minor(g.value(o))).value_or(0);
    }
  }
  out.count = static_cast<int>(params.size());
  for (const auto& [key, n] : params) out.largest_parameters = std::max(out.largest_parameters, n);
  return out;
}

struct ForwardBackward {
  double forward_s = 0;
  double forward_vector_s = 0;  // of which ops other than matmuls and convolutions
  double backward_s = 0;
  double useful_flops = 0;  // forward, unpadded
  std::vector<NodeTime> times;
};

bool AllShapesStatic(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs) {
    if (v != kNoValue && !g.value(v).type.shape.is_static()) return false;
  }
  for (ValueId v : n.outputs) {
    if (!g.value(v).type.shape.is_static()) return false;
  }
  return true;
}

// Share of uncosted nodes above which the estimate says it is a lower bound ("a few percent").
constexpr double kUncostedWarnShare = 0.03;

std::optional<std::string> CoverageWarning(const Estimate& e) {
  if (e.unknown_ops == 0) return std::nullopt;
  const double uncosted = 1 - e.coverage();
  if (uncosted <= kUncostedWarnShare && e.unknown_matrix_ops == 0) return std::nullopt;
  std::string out =
      Plural(e.unknown_ops, "op", "ops") + " (" + FormatFixed(uncosted * 100, 0) + "% of the graph";
  if (e.unknown_matrix_ops > 0)
    out += ", " + std::to_string(e.unknown_matrix_ops) + " of them matmuls or convolutions";
  out += ") count as zero, so step time and memory are lower bounds";
  const int no_model = e.unknown_ops - e.unknown_shape_ops;
  if (e.unknown_shape_ops > 0) {
    out += "; " + std::to_string(e.unknown_shape_ops) +
           " have shapes that depend on values computed at run time (a data-dependent op, a "
           "resize to a size derived from the input): make them static to cost them";
  }
  if (no_model > 0) {
    out += "; " + std::to_string(no_model) + " have no cost model (" +
           Join(e.no_model_kinds, ", ") +
           (no_model > static_cast<int>(e.no_model_kinds.size()) && e.no_model_kinds.size() == 4
                ? ", ..."
                : "") +
           ")";
  }
  return out;
}

// Counts what the cost model could and could not cost (the coverage figure).
void CountCoverage(const StepContext& c, Estimate& e) {
  for (NodeId id : c.graph.topo_order()) {
    const OpCost& cost = c.costs[static_cast<std::size_t>(id)];
    const Node& n = c.graph.node(id);
    if (cost.known) {
      e.costed_ops += cost.cls != CostClass::kFree;
      continue;
    }
    ++e.unknown_ops;
    e.unknown_matrix_ops += IsMatrixKind(n.kind);
    if (!AllShapesStatic(c.graph, n)) {
      ++e.unknown_shape_ops;
    } else if (const std::string op = "`" + n.QualifiedOp() + "`";
               e.no_model_kinds.size() < 4 &&
               std::ranges::find(e.no_model_kinds, op) == e.no_model_kinds.end()) {
      e.no_model_kinds.push_back(op);
    }
  }
}

// How much slower than the chosen precision's rate an f32 dot or convolution of a compiled
// program runs (its dtypes are kept as written): XLA's DEFAULT precision is one bf16 pass on a
// TPU and TF32 on a GPU that has it; a program that asks for more (`operand_precision`) gets, on a
// TPU, 3 bf16 passes for HIGH and 6 for HIGHEST, on a GPU true fp32 for HIGHEST.
double PrecisionSlowdown(const StepContext& c, const Node& n) {
  if (c.element_bytes != 0 || n.inputs.empty() || n.input(0) == kNoValue ||
      c.graph.value(n.input(0)).type.dtype != DType::kFloat32)
    return 1;
  const std::string asked = n.StringAttr("operand_precision").value_or("");
  const bool highest = asked.find("highest") != std::string::npos;
  const bool high = !highest && asked.find("high") != std::string::npos;
  double f32_rate = RatesFor(c.target, Precision::kFp32).matrix_flops;  // at DEFAULT
  if (c.target.is_tpu()) {
    f32_rate /= highest ? 6 : high ? std::max(1, c.target.fp32_matmul_passes) : 1;
  } else if (highest) {
    f32_rate = c.target.fp32_tflops.value_or(0) * 1e12 / std::max(1, c.devices_per_chip);
  }
  return f32_rate > 0 ? std::max(1.0, c.rates.matrix_flops / f32_rate) : 1;
}

// The time of a matrix op's work at the calibrated rate for its kind (matmul, convolution,
// depthwise convolution), after MXU padding; adds its padded FLOPs to the components.
double MatrixSeconds(const StepContext& c, const Node& n, const OpCost& cost, Estimate& e,
                     NodeTime& nt) {
  const Calibration& cal = c.cal;
  const double padded = cost.matmul ? PaddedFlops(*cost.matmul, c.target) : cost.flops;
  nt.mxu_utilization = padded > 0 ? cost.flops / padded : 1;
  const bool is_matmul = n.kind != OpKind::kConv && n.kind != OpKind::kConvTranspose;
  const bool depthwise = c.facts.depthwise[static_cast<std::size_t>(n.id)];
  const double eff = is_matmul   ? cal.matrix_efficiency
                     : depthwise ? cal.depthwise_efficiency
                                 : cal.conv_efficiency;
  (is_matmul   ? e.components.matmul_flops
   : depthwise ? e.components.depthwise_flops
               : e.components.conv_flops) += padded;
  // Eager NCHW convolutions are bound by layout and memory, not tensor-core math: their rate
  // does not follow the precision (calibrated per target family).
  const double rate = !is_matmul && cal.conv_rate_ignores_precision
                          ? RatesFor(c.target, Precision::kBf16).matrix_flops
                          : c.rates.matrix_flops;
  return padded * PrecisionSlowdown(c, n) / (rate * eff);
}

// Whether a node runs inside a kernel the eager framework fuses (attention, GELU/SiLU) rather than
// as a kernel of its own.
bool InsideFusedKernel(const StepContext& c, std::size_t node) {
  return (c.cal.fused_attention && c.facts.attention[node]) ||
         (c.cal.fused_activations && c.facts.inside_activation[node]);
}

double MemorySeconds(const StepContext& c, double bytes) {
  return bytes / (c.rates.bandwidth * c.cal.memory_efficiency);
}

// Whether a depthwise convolution runs on the calibration's own depthwise kernels: PyTorch
// hands fp16 ones to cuDNN (`use_cudnn_depthwise`), which the general factors describe.
bool OwnDepthwiseKernels(const StepContext& c) { return c.options.precision != Precision::kFp16; }

// The memory time of a depthwise convolution's inputs and outputs (see Calibration).
double DepthwiseMemorySeconds(const StepContext& c, double bytes, Estimate& e) {
  e.components.depthwise_bytes += bytes;
  if (!OwnDepthwiseKernels(c)) return MemorySeconds(c, bytes);
  return bytes /
         (c.rates.bandwidth * c.cal.depthwise_memory_efficiency.value_or(c.cal.memory_efficiency));
}

// Backward time over forward time of a kernel (with a depthwise convolution or not).
double BackwardRatio(const StepContext& c, bool depthwise) {
  return depthwise && OwnDepthwiseKernels(c)
             ? c.cal.depthwise_backward_ratio.value_or(c.cal.backward_ratio)
             : c.cal.backward_ratio;
}

// Adds one kernel's forward time `t` (and, training, its backward: `ratio` x the work, two
// kernels for a matrix op's data and weight gradients) to the step.
void AddKernel(const StepContext& c, double t, bool matrix, double ratio, NodeTime nt,
               ForwardBackward& fb, Estimate& e) {
  const double overhead_s = c.cal.kernel_overhead_us * 1e-6;
  fb.forward_s += t + overhead_s;
  if (!matrix) fb.forward_vector_s += t + overhead_s;
  e.components.forward_kernels += 1;
  double total = t + overhead_s;
  if (c.options.train) {
    const double kernels_bwd = matrix ? 2 : 1;
    e.components.backward_kernels += kernels_bwd;
    const double tb = ratio * t + kernels_bwd * overhead_s;
    fb.backward_s += tb;
    total += tb;
  }
  nt.ms = total * 1e3;
  fb.times.push_back(std::move(nt));
}

// The folded BatchNorm a training step runs again after a conv: its output read and written once
// more (one more kernel forward and backward when eager; fused into the conv's kernel by XLA).
double ImpliedBatchNormSeconds(const StepContext& c, const OpCost& cost, Estimate& e) {
  const double bn = 2 * cost.bytes_written;
  e.components.vector_bytes += bn;
  return MemorySeconds(c, bn);
}

// Phase 1, eager: one kernel per op, max(compute, memory) plus launch overhead, forward and
// backward.
ForwardBackward TimeOps(const StepContext& c, Estimate& e) {
  const double overhead_s = c.cal.kernel_overhead_us * 1e-6;
  ForwardBackward fb;
  for (NodeId id : c.graph.topo_order()) {
    const OpCost& cost = c.costs[static_cast<std::size_t>(id)];
    if (!cost.known || cost.cls == CostClass::kFree) continue;
    const std::size_t ni = static_cast<std::size_t>(id);
    if (InsideFusedKernel(c, ni)) continue;
    const Node& n = c.graph.node(id);
    NodeTime nt{id, n.name, n.QualifiedOp()};
    // A fused activation reads its input and writes its result, both of the result's size.
    const bool activation = c.cal.fused_activations && c.facts.activation_root[ni];
    const double bytes = activation ? 2 * cost.bytes_written : cost.bytes_read + cost.bytes_written;
    const bool matrix = cost.cls == CostClass::kMatrix;
    const bool depthwise = c.facts.depthwise[ni];
    double t = depthwise ? DepthwiseMemorySeconds(c, bytes, e) : MemorySeconds(c, bytes);
    if (matrix) {
      const double tc = MatrixSeconds(c, n, cost, e, nt);
      nt.compute_bound = tc >= t;
      t = std::max(tc, t);
      fb.useful_flops += cost.flops;
      if (c.options.train && c.facts.implied_batchnorm[ni]) {
        t += ImpliedBatchNormSeconds(c, cost, e) + overhead_s;
        e.components.forward_kernels += 1;
        e.components.backward_kernels += 1;
      }
    } else {
      e.components.vector_bytes += bytes;
    }
    AddKernel(c, t, matrix, BackwardRatio(c, depthwise), std::move(nt), fb, e);
  }
  return fb;
}

// Phase 1, XLA and torch.compile: the kernels of the fusion plan, each max(matrix time, the bytes
// crossing its boundary / bandwidth) plus one launch.
ForwardBackward TimeKernels(const StepContext& c, Estimate& e) {
  ForwardBackward fb;
  for (const FusionKernel& k : c.fusion->kernels) {
    // A kernel is named by its matmul or convolution when it has one, else by its root; "+N" says
    // how many more ops it fused.
    const auto named = std::ranges::find_if(k.nodes, [&](NodeId id) {
      return c.costs[static_cast<std::size_t>(id)].cls == CostClass::kMatrix;
    });
    const Node& root = c.graph.node(named != k.nodes.end() ? *named : k.root);
    NodeTime nt{
        root.id, root.name,
        root.QualifiedOp() + (k.nodes.size() > 1 ? "+" + std::to_string(k.nodes.size() - 1) : "")};
    double tc = 0;
    double bytes = k.bytes_in + k.bytes_out;
    bool matrix = false;
    bool depthwise = false;
    for (NodeId id : k.nodes) {
      const OpCost& cost = c.costs[static_cast<std::size_t>(id)];
      if (!cost.known || cost.cls != CostClass::kMatrix) continue;
      const Node& n = c.graph.node(id);
      matrix = true;
      depthwise |= c.facts.depthwise[static_cast<std::size_t>(id)];
      tc += MatrixSeconds(c, n, cost, e, nt);
      fb.useful_flops += cost.flops;
      if (c.options.train && c.facts.implied_batchnorm[static_cast<std::size_t>(id)])
        bytes += 2 * cost.bytes_written;
    }
    if (!matrix) e.components.vector_bytes += bytes;
    const double tm = depthwise ? DepthwiseMemorySeconds(c, bytes, e) : MemorySeconds(c, bytes);
    nt.compute_bound = matrix && tc >= tm;
    AddKernel(c, std::max(tc, tm), matrix, BackwardRatio(c, depthwise), std::move(nt), fb, e);
  }
  return fb;
}

ForwardBackward TimeForwardBackward(const StepContext& c, Estimate& e) {
  CountCoverage(c, e);
  return c.runtime == Runtime::kEager ? TimeOps(c, e) : TimeKernels(c, e);
}

struct Parameters {
  double count = 0;    // elements of the float initializers
  double tensors = 0;  // how many there are
  double adafactor_state = 0;
  double constant_bytes = 0;  // literals stored in the program (Node::IsStoredConstant)
};

// torch.onnx keeps one copy of initializers with equal contents (freshly initialised biases and
// norm scales) and re-exposes each duplicate through an Identity node: each is a parameter of its
// own in the model being trained.
bool IsDuplicatedInitializer(const Graph& graph, const Value& v) {
  if (v.producer == kNoNode) return false;
  const Node& n = graph.node(v.producer);
  return n.op_type == "Identity" && n.inputs.size() == 1 && n.input(0) != kNoValue &&
         graph.value(n.input(0)).origin == ValueOrigin::kInitializer;
}

// Phase 2: the parameters are the float initializers; stored literals are counted beside them.
Parameters CountParameters(const Graph& graph) {
  Parameters p;
  for (const Value& v : graph.values()) {
    if ((v.origin != ValueOrigin::kInitializer && !IsDuplicatedInitializer(graph, v)) ||
        !IsFloat(v.type.dtype) || !v.type.shape.is_static())
      continue;
    double n = 1;
    for (const Dim& d : v.type.shape.dims()) n *= static_cast<double>(d.value());
    p.count += n;
    p.tensors += 1;
    const auto& dims = v.type.shape.dims();
    p.adafactor_state += dims.size() >= 2 ? 4.0 * (static_cast<double>(dims.back().value()) +
                                                   n / static_cast<double>(dims.back().value()))
                                          : 4.0 * n;
  }
  // Literals compiled into the program live in HBM beside the weights (no gradients or optimizer
  // state: they are not trained), whatever the format calls them.
  for (const Node& n : graph.nodes()) {
    if (!n.IsStoredConstant()) continue;
    for (ValueId out : n.outputs) {
      if (auto b = TensorBytes(graph.value(out).type, 0)) p.constant_bytes += *b;
    }
  }
  return p;
}

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
  // Tensor parallelism divides every op's work; rematerialisation runs forward work again in the
  // backward pass; the collectives of each parallelism axis (sharding.h).
  const double tp = c.parallel.tensor;
  const double recompute = !options.train                                           ? 0
                           : c.remat == Remat::kLayer || c.remat == Remat::kOffload ? fb.forward_s
                           : c.remat == Remat::kDots ? fb.forward_vector_s
                                                     : 0;
  CollectiveInputs ci;
  ci.parallel = c.parallel;
  ci.param_count = params.count;
  ci.weight_bytes_per_param = options.precision == Precision::kFp32 ? 4 : 2;
  ci.grad_bytes_per_param =
      options.precision == Precision::kMixed || options.precision == Precision::kBf16Params ? 2 : 4;
  // Two all-reduces of a layer's activations forward (after attention and after the MLP) and two
  // backward, each of the tensor that crosses the layer boundary.
  ci.tensor_allreduce_bytes = c.layers.count > 0 ? 4 * c.layers.boundary_bytes : 0;
  // The two devices of a v2/v3/7x chip reduce between themselves first (on the chip, about free);
  // the ring between chips runs at the chip's links.
  ci.link_bytes_s = c.target.ici_gbps.value_or(0) * 1e9 / 2;
  ci.train = options.train;
  const CollectiveTimes coll = Collectives(ci);
  if (options.train) {
    e.components.optimizer_bytes = params.count * UpdateBytesPerParam(options.optimizer);
    e.components.parameter_tensors = params.tensors;
  }
  e.components.matrix_peak_flops = c.rates.matrix_flops;
  e.components.bandwidth = c.rates.bandwidth;
  const double shards = static_cast<double>(c.parallel.fsdp) * c.parallel.tensor;
  e.forward_ms = fb.forward_s / tp * 1e3;
  e.backward_ms = fb.backward_s / tp * 1e3;
  e.recompute_ms = recompute / tp * 1e3;
  e.optimizer_ms = opt / shards * 1e3;
  e.allreduce_ms = coll.data_s * 1e3;
  e.fsdp_ms = coll.fsdp_s * 1e3;
  e.tensor_ms = coll.tensor_s * 1e3;
  // XLA overlaps the FSDP all-gather of the next layer with the current one: only what the
  // compute cannot hide adds to the step.
  const double compute_ms = e.forward_ms + e.backward_ms + e.recompute_ms;
  const double exposed_fsdp_ms = std::max(0.0, e.fsdp_ms - compute_ms);
  // Multislice: each chip all-reduces its gradient shard with its peers in the other slices over
  // DCN, overlapped with the backward pass (XLA's async collectives; MaxText's data-parallel
  // overlap flags).
  const int slices = options.slices;  // validated by EstimateStep
  if (options.train && slices > 1 && c.target.dcn_gbps) {
    const double shard = params.count / (static_cast<double>(c.parallel.fsdp) * c.parallel.tensor) *
                         ci.grad_bytes_per_param;
    e.dcn_ms =
        2.0 * (slices - 1) / slices * shard * c.devices_per_chip / (*c.target.dcn_gbps * 1e9) * 1e3;
  }
  const double exposed_dcn_ms = std::max(0.0, e.dcn_ms - e.backward_ms - e.recompute_ms);
  // The host launches the device's work ahead of it: the step is the longer of the two.
  e.host_ms =
      c.cal.step_overhead_us * 1e-3 * (options.train ? 3 : 1) +
      c.cal.host_op_us * 1e-3 * (e.components.forward_kernels + e.components.backward_kernels);
  e.step_ms = std::max(e.host_ms, compute_ms + e.optimizer_ms) + e.allreduce_ms + e.tensor_ms +
              exposed_fsdp_ms + exposed_dcn_ms;
  const double replicas = static_cast<double>(c.Devices()) / tp * slices;
  e.global_batch = static_cast<std::int64_t>(static_cast<double>(options.batch) * replicas);
  e.model_flops = fb.useful_flops * (options.train ? 3 : 1) * replicas;
  const double step_s = e.step_ms / 1e3;
  const double peak = c.target.bf16_tflops.value_or(c.target.fp32_tflops.value_or(0)) * 1e12;
  if (step_s > 0 && peak > 0) e.mfu = e.model_flops / (step_s * peak * options.chips * slices);
  if (step_s > 0) e.samples_per_s = static_cast<double>(e.global_batch) / step_s;
}

struct ActivationBytes {
  double natural_total = 0;  // before tiling
  double layout_total = 0;   // in the target's tiled layout
};

// Per ValueId, the bytes a node's output takes in HBM when it is allocated: never for views and
// values inside a fused kernel (attention, activation), under XLA only for the values kernels
// write; nullopt for the rest and for graph inputs.
std::vector<std::optional<double>> AllocatedBytes(const StepContext& c) {
  std::vector<std::optional<double>> out(c.graph.values().size());
  for (const Node& n : c.graph.nodes()) {
    const std::size_t i = static_cast<std::size_t>(n.id);
    if (c.costs[i].cls == CostClass::kFree || InsideFusedKernel(c, i)) continue;
    for (ValueId o : n.outputs) {
      if (c.fusion && !c.written[static_cast<std::size_t>(o)]) continue;
      const Value& v = c.graph.value(o);
      out[static_cast<std::size_t>(o)] =
          LayoutBytes(v.type, c.target, c.element_bytes, c.facts.channels_minor(v));
    }
  }
  return out;
}

// Above this many nodes the text order is used as the schedule (the greedy one is quadratic in
// the width of the graph).
constexpr std::size_t kMaxScheduledNodes = 20000;

// The order a compiler's memory-aware scheduler runs the nodes in (XLA's schedulers minimise
// peak memory), approximated greedily: among the nodes whose inputs are ready, the one that
// allocates least net of what it frees, ties in text order. The same program in two text forms
// (HLO, StableHLO) gets the same schedule whatever order its text lists the ops in.
std::vector<NodeId> MemoryOrder(const StepContext& c,
                                const std::vector<std::optional<double>>& allocated) {
  const Graph& g = c.graph;
  const auto& topo = g.topo_order();
  if (topo.size() > kMaxScheduledNodes) return topo;
  std::vector<std::size_t> position(g.nodes().size());
  for (std::size_t i = 0; i < topo.size(); ++i) position[static_cast<std::size_t>(topo[i])] = i;
  auto distinct_inputs = [&](NodeId id) {
    std::vector<ValueId> in;
    for (ValueId v : g.node(id).inputs) {
      if (v != kNoValue && std::ranges::find(in, v) == in.end()) in.push_back(v);
    }
    return in;
  };
  std::vector<int> pending(g.nodes().size(), 0);
  std::vector<int> users_left(g.values().size(), 0);
  std::set<ValueId> returned(g.outputs().begin(), g.outputs().end());
  std::vector<NodeId> ready;
  for (NodeId id : topo) {
    for (ValueId v : distinct_inputs(id)) {
      ++users_left[static_cast<std::size_t>(v)];
      pending[static_cast<std::size_t>(id)] += g.value(v).producer != kNoNode;
    }
  }
  for (NodeId id : topo) {
    if (pending[static_cast<std::size_t>(id)] == 0) ready.push_back(id);
  }
  auto net_bytes = [&](NodeId id) {
    double net = 0;
    for (ValueId o : g.node(id).outputs) net += allocated[static_cast<std::size_t>(o)].value_or(0);
    for (ValueId v : distinct_inputs(id)) {
      const NodeId p = g.value(v).producer;
      if (p != kNoNode && users_left[static_cast<std::size_t>(v)] == 1 && !returned.contains(v))
        net -= allocated[static_cast<std::size_t>(v)].value_or(0);
    }
    return net;
  };
  std::vector<NodeId> order;
  order.reserve(topo.size());
  while (!ready.empty()) {
    std::size_t best = 0;
    double best_net = net_bytes(ready[0]);
    for (std::size_t r = 1; r < ready.size(); ++r) {
      const double net = net_bytes(ready[r]);
      const auto pos = [&](std::size_t k) { return position[static_cast<std::size_t>(ready[k])]; };
      if (net < best_net || (net == best_net && pos(r) < pos(best))) {
        best = r;
        best_net = net;
      }
    }
    const NodeId id = ready[best];
    ready[best] = ready.back();
    ready.pop_back();
    order.push_back(id);
    for (ValueId v : distinct_inputs(id)) --users_left[static_cast<std::size_t>(v)];
    for (ValueId o : g.node(id).outputs) {
      std::vector<NodeId> seen;
      for (NodeId u : g.value(o).users) {
        if (std::ranges::find(seen, u) != seen.end()) continue;
        seen.push_back(u);
        if (--pending[static_cast<std::size_t>(u)] == 0) ready.push_back(u);
      }
    }
  }
  return order.size() == topo.size() ? order : topo;
}

// Inference activations: liveness over the schedule (a value is live from its producer to its
// last user); the peak of live bytes.
ActivationBytes LiveActivations(const StepContext& c, Estimate& e, double& largest) {
  const Graph& graph = c.graph;
  ActivationBytes a;
  std::map<ValueId, std::size_t> last_use;
  const std::vector<std::optional<double>> allocated = AllocatedBytes(c);
  const std::vector<NodeId> order = MemoryOrder(c, allocated);
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (ValueId in : graph.node(order[i]).inputs) {
      if (in != kNoValue) last_use[in] = i;
    }
  }
  for (ValueId out : graph.outputs()) last_use[out] = order.size();
  double live = 0, peak_live = 0;
  for (ValueId in : graph.inputs())
    live += LayoutBytes(graph.value(in).type, c.target, c.element_bytes,
                        c.facts.channels_minor(graph.value(in)))
                .value_or(0);
  std::multimap<std::size_t, double> frees;
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (ValueId out : graph.node(order[i]).outputs) {
      const auto& b = allocated[static_cast<std::size_t>(out)];
      if (!b) continue;
      live += *b;
      a.natural_total += TensorBytes(graph.value(out).type, c.element_bytes).value_or(0);
      a.layout_total += *b;
      largest = std::max(largest, *b);
      frees.emplace(last_use.count(out) ? last_use[out] : i, *b);
    }
    peak_live = std::max(peak_live, live);
    for (auto it = frees.begin(); it != frees.end() && it->first <= i;) {
      live -= it->second;
      it = frees.erase(it);
    }
  }
  e.memory.activations = peak_live;
  e.memory.transients = 0;
  e.components.live_peak_bytes = peak_live;
  return a;
}

// What rematerialisation keeps instead of every saved tensor: the matmul/conv inputs (kDots), or
// each layer's boundary tensors plus one layer's saved tensors while it is recomputed (kLayer).
double RematActivations(const StepContext& c, const SavedTensors& st) {
  switch (c.remat) {
    case Remat::kNone:
      return st.saved * c.cal.saved_activation_share;
    case Remat::kDots:
      return st.matrix;
    case Remat::kLayer:
    case Remat::kOffload: {
      double largest_layer = 0, outside = 0;
      for (const auto& [key, bytes] : st.by_layer) {
        if (key.empty()) {
          outside += bytes;
        } else {
          largest_layer = std::max(largest_layer, bytes);
        }
      }
      return (c.remat == Remat::kOffload ? 0 : c.layers.boundary_bytes) + largest_layer + outside;
    }
  }
  return st.saved;
}

// Sharding: FSDP and tensor parallelism divide the parameter state; tensor parallelism divides
// activations too (sequence-parallel layout between the matmuls). An FSDP chip holds the gathered
// weights of the layer it runs and of the next one (prefetch).
void ShardMemory(const StepContext& c, Estimate& e) {
  MemoryBreakdown& m = e.memory;
  const double shards = static_cast<double>(c.parallel.fsdp) * c.parallel.tensor;
  const double tp = c.parallel.tensor;
  m.weights /= shards;
  m.gradients /= shards;
  m.optimizer_state /= shards;
  m.master_weights /= shards;
  m.activations /= tp;
  m.transients /= tp;
  m.padding_waste /= tp;
  if (c.parallel.fsdp > 1)
    m.transients +=
        2 * c.layers.largest_parameters / tp * (c.element_bytes > 0 ? c.element_bytes : 2);
  e.components.state_bytes /= shards;
}

// Phase 4: memory per chip: weights, gradients, optimizer state, activations, transients.
void MemoryPerChip(const StepContext& c, const Parameters& params, Estimate& e) {
  const EstimateOptions& options = c.options;
  MemoryBreakdown& m = e.memory;
  const bool mixed = options.precision == Precision::kMixed;
  // bf16-params: weights, gradients and optimizer state all in bf16, no fp32 copy (MaxText's
  // weight_dtype=bfloat16; optax keeps Adam's moments in the parameters' dtype).
  const bool bf16_params = options.precision == Precision::kBf16Params;
  const double state_scale = bf16_params ? 0.5 : 1.0;
  m.weights = params.count * (mixed || bf16_params ? 2 : 4) + params.constant_bytes;
  if (options.train) {
    m.gradients = params.count * (mixed || bf16_params ? 2 : 4);
    m.master_weights = mixed ? params.count * 4 : 0;
    switch (options.optimizer) {
      case Optimizer::kSgd:
        m.optimizer_state = 0;
        break;
      case Optimizer::kMomentum:
        m.optimizer_state = 4 * params.count * state_scale;
        break;
      case Optimizer::kAdam:
        m.optimizer_state = 8 * params.count * state_scale;
        break;
      case Optimizer::kAdafactor:
        m.optimizer_state = params.adafactor_state * state_scale;
        break;
    }
  }
  double largest = 0;
  ActivationBytes act;
  if (options.train) {
    const SavedTensors st =
        ComputeSavedTensors(c.graph, c.costs, c.facts, c.cal, c.target, c.element_bytes);
    act.natural_total = st.natural;
    act.layout_total = st.layout;
    largest = st.largest;
    m.activations = RematActivations(c, st);
    m.transients = largest * c.cal.transient_factor;
    e.components.saved_bytes = st.saved;
  } else {
    act = LiveActivations(c, e, largest);
  }
  m.fixed = c.cal.fixed_memory_bytes;
  e.components.largest_tensor_bytes = largest;
  e.components.state_bytes = m.weights + m.gradients + m.optimizer_state + m.master_weights;
  m.padding_waste = act.layout_total - act.natural_total;
  ShardMemory(c, e);
}

// Phase 5: whether it fits, and the largest batch that would (activations scale with the batch).
void FitAndMaxBatch(const StepContext& c, Estimate& e) {
  const MemoryBreakdown& m = e.memory;
  e.hbm_bytes = *c.target.hbm_gib / std::max(1, c.target.devices_per_chip) * kGiB;
  const double usable = e.hbm_bytes * kUsableHbmShare;
  e.fits = m.total() <= usable;
  const double per_sample = (m.activations + m.transients) / static_cast<double>(c.options.batch);
  const double fixed_part = m.total() - m.activations - m.transients;
  e.max_batch = per_sample > 0 && usable > fixed_part
                    ? static_cast<std::int64_t>((usable - fixed_part) / per_sample)
                    : 0;
}

// Phase 6: what the step costs.
void Prices(const StepContext& c, Estimate& e) {
  const std::optional<double> price =
      c.options.usd_per_chip_hour ? c.options.usd_per_chip_hour : c.target.price_usd_per_chip_hour;
  if (price) {
    e.usd_per_hour = *price * c.options.chips * c.options.slices;
    if (e.samples_per_s > 0)
      e.usd_per_million_samples = *e.usd_per_hour / (e.samples_per_s * 3600) * 1e6;
  }
  if (c.options.dataset_size && e.samples_per_s > 0) {
    e.epoch_s = *c.options.dataset_size / e.samples_per_s;
    if (e.usd_per_hour) e.usd_per_epoch = *e.usd_per_hour * *e.epoch_s / 3600;
  }
}

// How ops became kernels, in the words the report prints.
std::string RuntimeAssumption(const StepContext& c, const Estimate& e) {
  const std::string kernels = std::to_string(e.kernels) + " kernels per forward pass";
  if (c.runtime == Runtime::kEager) {
    return "runtime eager (" + kernels +
           ", one per op): per op max(FLOPs / (peak x efficiency), bytes / (bandwidth x "
           "efficiency)) + launch overhead";
  }
  return "runtime " + std::string(NameOf(c.runtime)) + " (" + kernels +
         " after fusion): per fused kernel max(FLOPs / (peak x efficiency), bytes crossing "
         "its boundary / (bandwidth x efficiency)) + launch overhead";
}

// What the figures assume, in the words the report prints.
std::vector<std::string> Assumptions(const StepContext& c, const Estimate& e) {
  const EstimateOptions& options = c.options;
  const Calibration& cal = c.cal;
  std::vector<std::string> out = {
      std::string(options.train ? "training step" : "inference step") + ", " +
          std::string(NameOf(options.precision)) +
          (options.precision == Precision::kBf16 ? " (bf16 compute, fp32 master weights)" : "") +
          (options.precision == Precision::kBf16Params
               ? " (bf16 weights, gradients and optimizer state; no fp32 copy)"
               : "") +
          (options.precision == Precision::kFp16
               ? " (fp16 compute with loss scaling, fp32 master weights)"
               : "") +
          (options.train ? ", optimizer " + std::string(NameOf(options.optimizer)) : ""),
      c.rates.matrix_note,
      "efficiency factors `" + cal.name + "`: matmul " + FormatFixed(cal.matrix_efficiency, 2) +
          ", conv " + FormatFixed(cal.conv_efficiency, 2) + ", bandwidth " +
          FormatFixed(cal.memory_efficiency, 2) + ", per-kernel overhead " +
          FormatFixed(cal.kernel_overhead_us, 1) + " us (" + cal.source + ")",
      RuntimeAssumption(c, e) +
          std::string(c.target.is_tpu()
                          ? "; matmuls padded to " +
                                std::to_string(c.target.mxu_dim.value_or(128)) + "x" +
                                std::to_string(c.target.mxu_dim.value_or(128)) + " MXU tiles"
                          : ""),
  };
  if (options.train) {
    out.push_back("backward = " + FormatFixed(cal.backward_ratio, 1) +
                  "x forward per kernel; optimizer update bandwidth-bound over the parameter "
                  "state");
  }
  if (c.facts.any_attention && cal.fused_attention) {
    out.push_back(
        "attention (softmax(QK^T)V) runs as one fused kernel: the S x S scores are never stored");
  }
  if (c.runtime == Runtime::kEager && cal.fused_activations && c.facts.any_activation) {
    out.push_back(
        "GELU and SiLU, written out by the export as several ops, run as one kernel each "
        "(PyTorch's nn.GELU and nn.SiLU)");
  }
  if (c.runtime == Runtime::kEager && c.facts.any_depthwise && OwnDepthwiseKernels(c) &&
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
        "a conv network without normalization ops was exported with BatchNorm folded into the "
        "convs; "
        "training runs one BatchNorm per conv again");
  }
  const std::string devices = c.devices_per_chip > 1
                                  ? std::to_string(c.Devices()) + " devices (" +
                                        std::to_string(options.chips) + " chips x " +
                                        std::to_string(c.devices_per_chip) + ")"
                                  : std::to_string(options.chips) + " chips";
  if (c.Devices() > 1 && c.parallel.data == c.Devices() && c.target.ici_gbps) {
    out.push_back("data parallel over " + devices +
                  ": ring all-reduce of the gradients over ICI at half the "
                  "bidirectional bandwidth, not overlapped");
  } else if (c.Devices() > 1 && !c.target.ici_gbps) {
    out.push_back("data parallel over " + devices + ": " + c.target.name +
                  "'s interconnect bandwidth is not known, so the gradient all-reduce is not "
                  "counted (the step time is a lower bound)");
  }
  const Parallelism& p = c.parallel;
  if (p.fsdp > 1 || p.tensor > 1) {
    out.push_back(
        "parallelism " + ToString(p) + ": parameters, gradients and optimizer state divided over " +
        std::to_string(p.fsdp * p.tensor) + " chips" +
        (p.fsdp > 1 ? "; FSDP all-gathers the parameters forward and backward and "
                      "reduce-scatters the gradients over ICI, overlapped with compute"
                    : "") +
        (p.tensor > 1 ? "; tensor parallelism divides each op and the activations " +
                            std::to_string(p.tensor) +
                            " ways and all-reduces each layer's activations twice forward and "
                            "twice backward, not overlapped"
                      : ""));
  }
  if (options.slices > 1) {
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
    if (c.remat == Remat::kLayer || c.remat == Remat::kOffload) {
      out.push_back("rematerialisation per layer: each of the " + std::to_string(c.layers.count) +
                    " layers keeps the tensors that leave it" +
                    (c.remat == Remat::kOffload
                         ? " in host memory (" + FormatBytes(c.layers.boundary_bytes) +
                               " offloaded per step, the transfers assumed hidden behind compute)"
                         : std::string()) +
                    ", and runs its forward pass again in the backward pass");
    } else {
      out.push_back(
          std::string(options.remat != Remat::kDots
                          ? "the graph names no layers (node scopes), so --remat layer is "
                            "estimated as `dots`: "
                          : "rematerialisation `dots`: ") +
          "the inputs of matmuls and convolutions are kept, the ops between them run again in "
          "the backward pass");
    }
  }
  out.push_back("usable HBM = " + FormatFixed(kUsableHbmShare * 100, 0) + "% of " +
                FormatFixed(e.hbm_bytes / kGiB, 1) +
                " GiB per device; max batch extrapolates activation memory linearly");
  if (e.unknown_ops > 0 && !e.coverage_warning)
    out.push_back(Plural(e.unknown_ops, "op has", "ops have") + " no cost model and count as zero");
  return out;
}

}  // namespace

struct EstimateCache::Entry {
  Entry(const Graph& g, int eb, bool fused_kernels)
      : graph(&g),
        element_bytes(eb),
        fused(fused_kernels),
        costs(ComputeOpCosts(g, eb)),
        facts(AnalyzeGraph(g)) {
    if (!fused) return;
    FusionOptions fo;
    fo.element_bytes = eb;
    fusion = PlanFusions(g, costs, fo);
    written.assign(g.values().size(), false);
    for (const FusionKernel& k : fusion->kernels) {
      for (ValueId v : k.written) written[static_cast<std::size_t>(v)] = true;
    }
  }
  const Graph* graph;
  int element_bytes;
  bool fused;
  std::vector<OpCost> costs;
  GraphFacts facts;
  std::optional<FusionPlan> fusion;
  std::vector<bool> written;
};

EstimateCache::EstimateCache() = default;
EstimateCache::~EstimateCache() = default;

const EstimateCache::Entry& EstimateCache::Get(const Graph& graph, int element_bytes, bool fused) {
  for (const auto& e : entries_) {
    if (e->graph == &graph && e->element_bytes == element_bytes && e->fused == fused) return *e;
  }
  entries_.push_back(std::make_unique<Entry>(graph, element_bytes, fused));
  return *entries_.back();
}

bool SameStep(const EstimateOptions& a, const EstimateOptions& b) {
  return a.train == b.train && a.optimizer == b.optimizer && a.precision == b.precision &&
         a.batch == b.batch && a.chips == b.chips && a.parallel == b.parallel &&
         a.slices == b.slices && a.remat == b.remat && a.runtime == b.runtime &&
         a.dataset_size == b.dataset_size && a.usd_per_chip_hour == b.usd_per_chip_hour &&
         a.calibration == b.calibration;
}

Result<Estimate> EstimateStep(const Graph& graph, const TargetSpec& target,
                              const EstimateOptions& options) {
  if (options.batch < 1) return MakeError("the batch must be at least 1");
  if (options.slices < 1 || options.slices > 1024)
    return MakeError("the number of slices must be between 1 and 1024");
  if (!target.hbm_gbps || !target.hbm_gib ||
      (!target.bf16_tflops.has_value() && !target.fp32_tflops.has_value())) {
    return MakeError("target `" + target.name +
                     "` lacks the peak rate, HBM or bandwidth figures an estimate needs");
  }
  // A compiled XLA program's dtypes are compiled in: its tensors keep their widths whatever the
  // precision option says (which still picks the matmul rate: f32 dots at default precision run
  // as bf16 passes on TPUs, TF32 on GPUs).
  const int eb = graph.facts().xla_program ? 0 : options.precision == Precision::kFp32 ? 4 : 2;
  const int devices_per_chip = std::max(1, target.devices_per_chip);
  auto parallel = ResolveParallelism(options.parallel, options.chips * devices_per_chip);
  if (!parallel) return parallel.error();
  const Runtime runtime = ResolveRuntime(options.runtime, target, graph);
  std::unique_ptr<EstimateCache::Entry> own;
  const bool fused = runtime != Runtime::kEager;
  const EstimateCache::Entry& derived =
      options.cache ? options.cache->Get(graph, eb, fused)
                    : *(own = std::make_unique<EstimateCache::Entry>(graph, eb, fused));
  StepContext c{graph,
                target,
                options,
                options.calibration ? *options.calibration : CalibrationFor(target, runtime),
                eb,
                RatesFor(target, options.precision),
                derived.costs,
                derived.facts,
                *parallel,
                Layers{},
                Remat::kNone,
                devices_per_chip,
                runtime,
                derived.fusion,
                derived.written};
  c.layers = FindLayers(graph, target, eb, c.facts);
  const bool per_layer = options.remat == Remat::kLayer || options.remat == Remat::kOffload;
  c.remat = per_layer && c.layers.count < 2 ? Remat::kDots : options.remat;
  Estimate e;
  e.channels_minor = c.facts.channels_minor.any();
  e.target = target.name;
  e.chips = options.chips;
  e.hardware = target.name;
  e.parallel = c.parallel;
  e.remat = c.remat;
  e.runtime = runtime;
  e.slices = options.slices;
  ForwardBackward fb = TimeForwardBackward(c, e);
  e.kernels = static_cast<int>(e.components.forward_kernels);
  e.coverage_warning = CoverageWarning(e);
  const Parameters params = CountParameters(graph);
  AssembleStep(c, fb, params, e);
  MemoryPerChip(c, params, e);
  FitAndMaxBatch(c, e);
  Prices(c, e);
  std::sort(fb.times.begin(), fb.times.end(),
            [](const NodeTime& a, const NodeTime& b) { return a.ms > b.ms; });
  if (fb.times.size() > 10) fb.times.resize(10);
  e.top_nodes = std::move(fb.times);
  e.assumptions = Assumptions(c, e);
  return e;
}

}  // namespace tpudoctor

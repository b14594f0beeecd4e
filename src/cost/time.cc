// Time: forward and backward seconds of a step, op by op for eager runtimes and kernel by kernel
// for XLA and torch.compile (the fusion plan), at the device's rates and its calibration.
#include <algorithm>
#include <cmath>

#include "src/cost/step.h"
#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

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

// Whether `n` is an expert matmul of dropless routing: a grouped-matmul kernel
// (Calibration::grouped_tile_rows, grouped_matmul_efficiency).
bool GroupedExpert(const StepContext& c, const Node& n) {
  return c.facts.grouped_experts && c.facts.expert_matmul[static_cast<std::size_t>(n.id)];
}

// The time of a matrix op's work at the calibrated rate for its kind (matmul, convolution,
// depthwise convolution), after MXU padding; adds its padded FLOPs to the components.
double MatrixSeconds(const StepContext& c, const Node& n, const OpCost& cost, Estimate& e,
                     KernelTime& nt) {
  const Calibration& cal = c.cal;
  double padded = cost.matmul ? PaddedFlops(*cost.matmul, c.target) : cost.flops;
  // A flash/splash kernel computes whole tiles of the attention's pairs (Calibration::
  // attention_block), more than the mask keeps.
  if (cost.attention && cost.matmul && cal.attention_block > 0) {
    const double kept = AttentionPairShare(*cost.attention, cost.matmul->m, cost.matmul->n);
    if (kept > 0) {
      padded *=
          AttentionPairShare(*cost.attention, cost.matmul->m, cost.matmul->n, cal.attention_block) /
          kept;
    }
  }
  nt.mxu_utilization = padded > 0 ? cost.flops / padded : 1;
  const bool is_matmul = n.kind != OpKind::kConv && n.kind != OpKind::kConvTranspose;
  const bool depthwise = c.facts.depthwise[static_cast<std::size_t>(n.id)];
  const bool nhwc = !is_matmul && !depthwise && ChannelsLastConv(c, n);
  const bool attention = n.op == Op::kAttention;
  const double matmul_eff = attention ? AttentionEfficiency(c) : cal.matrix_efficiency;
  const double eff = is_matmul
                         ? matmul_eff * (GroupedExpert(c, n) ? cal.grouped_matmul_efficiency : 1)
                     : depthwise ? cal.depthwise_efficiency
                     : nhwc      ? *cal.channels_last_conv_efficiency
                                 : cal.ConvEfficiency();
  (is_matmul   ? e.components.matmul_flops
   : depthwise ? e.components.depthwise_flops
               : e.components.conv_flops) += padded;
  // Eager NCHW convolutions are bound by layout and memory, not tensor-core math: their rate
  // does not follow the precision (calibrated per target family). fp8 recipes quantize the
  // layers' weight matmuls (AQT int8 its dot_generals alone, not convolutions); the attention
  // kernels (flash, splash) keep bf16 (MaxText's fp8
  // quantization rewrites the layers' dot_generals, which a Pallas attention kernel is not;
  // Transformer Engine leaves dot-product attention in bf16 unless asked).
  const bool bf16_rate = (!is_matmul && !nhwc && cal.conv_rate_ignores_precision) ||
                         (attention && EightBitMatmuls(c.options.precision)) ||
                         (!is_matmul && c.options.precision == Precision::kInt8);
  const double rate =
      bf16_rate ? RatesFor(c.target, Precision::kBf16).matrix_flops : c.rates.matrix_flops;
  return padded * PrecisionSlowdown(c, n) / (rate * eff);
}

// The bytes a grouped-matmul kernel streams beyond its operands and result: an expert matmul
// [experts, slots, k] x [experts, k, n] of dropless routing, in tiles of `grouped_tile_rows`
// tokens by `grouped_tile_cols` outputs, reads each expert's weights once per row tile and the
// tokens once per column block. Under fp8 or int8 the kernel's operands are 8-bit.
double GroupedRereadBytes(const StepContext& c, const Node& n) {
  const double rows = c.cal.grouped_tile_rows, cols = c.cal.grouped_tile_cols;
  if (rows <= 0 || cols <= 0 || !GroupedExpert(c, n)) return 0;
  const Shape& x = c.graph.value(n.input(0)).type.shape;
  const Shape& w = c.graph.value(n.input(1)).type.shape;
  if (!x.is_static() || !w.is_static() || x.rank() != 3 || w.rank() != 3) return 0;
  const auto d = [](const Shape& s, std::size_t i) {
    return static_cast<double>(s.dim(i).value());
  };
  const double experts = d(x, 0), slots = d(x, 1), k = d(x, 2), out = d(w, 2);
  const double eb = EightBitMatmuls(c.options.precision) ? 1 : c.ActivationBytes();
  const double token_rereads = std::ceil(out / cols) - 1;
  const double weight_rereads = std::ceil(slots / rows) - 1;
  return eb * experts * k * (slots * token_rereads + out * weight_rereads);
}

// Expert parallelism: a device holds 1/ep of each MoE layer's experts and runs them on the tokens
// every device of its group routes to them, as many rows in all as one replica's share, so the
// matmul's work is a replica's; its weights are its own experts' alone. The rest of the weight
// operand, (1 - 1/ep) of it, is not this device's traffic (nor, backward, its weight gradient).
double ExpertWeightBytesElsewhere(const StepContext& c, const Node& n) {
  if (c.parallel.expert <= 1 || !c.facts.expert_matmul[static_cast<std::size_t>(n.id)]) return 0;
  const auto bytes = TensorBytes(c.graph.value(n.input(1)).type, c.element_bytes);
  return bytes ? *bytes * (1 - 1.0 / c.parallel.expert) : 0;
}

// What an expert matmul's kernel moves beyond its operands and result: a grouped kernel's
// re-reads, less the weights of the experts other devices hold.
double ExpertMatmulExtraBytes(const StepContext& c, const Node& n) {
  return GroupedRereadBytes(c, n) - ExpertWeightBytesElsewhere(c, n);
}

// AQT int8 (Precision::kInt8) scales each operand of a weight matmul by its absolute maximum over
// the contracted dimension, computed from the 16-bit operand every step: a reduction that must
// finish before the quantized product starts, so no fusion into the matmul hides it. Each operand
// is read once more (forward here; the gradients' products, quantized alike, through the
// backward ratio). Attention kernels stay bf16. A server's weights do not change and its quantized
// checkpoint carries their scales (MaxText's checkpoint_is_quantized): only the activation
// operand's are computed. (An evaluation pass inside training quantizes the weights it has.)
double QuantizationScaleBytes(const StepContext& c, const Node& n) {
  if (c.options.precision != Precision::kInt8 || n.kind != OpKind::kMatMul ||
      n.op == Op::kAttention || n.inputs.size() < 2)
    return 0;
  double bytes = 0;
  for (int i = 0; i < 2; ++i) {
    if (n.input(i) == kNoValue) continue;
    const Value& operand = c.graph.value(n.input(i));
    if (c.options.serve && operand.origin == ValueOrigin::kInitializer) continue;
    bytes += TensorBytes(operand.type, c.element_bytes).value_or(0);
  }
  return bytes;
}

// A LoRA adapter beside a frozen weight matmul (EstimateOptions::lora_rank): x A reads the
// matmul's input again; (x A) B writes a tensor of the output's size, and adding it into the
// output reads both and writes the sum (Megatron-Bridge's LoRALinear adds them as tensors). The
// rank-r products themselves are negligible work.
double LoraAdapterBytes(const StepContext& c, const Node& n) {
  if (!c.Adapted(static_cast<std::size_t>(n.id)) || n.outputs.empty()) return 0;
  const auto x = TensorBytes(c.graph.value(n.input(0)).type, c.element_bytes);
  const auto y = TensorBytes(c.graph.value(n.outputs[0]).type, c.element_bytes);
  return x && y ? *x + 4 * *y : 0;
}

// Bytes a matrix op's kernel moves beyond its operands and result.
double MatrixExtraBytes(const StepContext& c, const Node& n) {
  return ExpertMatmulExtraBytes(c, n) + QuantizationScaleBytes(c, n) + LoraAdapterBytes(c, n);
}

// The memory time of a depthwise convolution's inputs and outputs (see Calibration).
double DepthwiseMemorySeconds(const StepContext& c, double bytes, Estimate& e) {
  e.components.depthwise_bytes += bytes;
  if (!OwnDepthwiseKernels(c)) return c.MemorySeconds(bytes);
  return bytes /
         (c.rates.bandwidth * c.cal.depthwise_memory_efficiency.value_or(c.cal.memory_efficiency));
}

// Backward time over forward time of a kernel, by what it computes: a depthwise convolution on
// the framework's own kernels, an attention, another matrix op, or vector work.
enum class KernelKind : std::uint8_t { kVector, kMatrix, kAttention, kDepthwise };
double BackwardRatio(const StepContext& c, KernelKind kind) {
  switch (kind) {
    case KernelKind::kDepthwise:
      if (OwnDepthwiseKernels(c))
        return c.cal.depthwise_backward_ratio.value_or(c.cal.matrix_backward_ratio);
      return c.cal.matrix_backward_ratio;
    case KernelKind::kAttention:
      return c.cal.attention_backward_ratio;
    case KernelKind::kMatrix:
      return c.cal.matrix_backward_ratio;
    case KernelKind::kVector:
      return c.cal.backward_ratio;
  }
  return c.cal.backward_ratio;
}

KernelKind KindOf(bool matrix, bool depthwise, bool attention) {
  if (!matrix) return KernelKind::kVector;
  if (depthwise) return KernelKind::kDepthwise;
  return attention ? KernelKind::kAttention : KernelKind::kMatrix;
}

// Adds one kernel's forward time `t` (and, training, its backward: `ratio` x the work, two
// kernels for a matrix op's data and weight gradients) to the step; an `attention` kernel's
// also to the attention time.
void AddKernel(const StepContext& c, double t, bool matrix, bool attention, double ratio,
               KernelTime nt, ForwardBackward& fb, Estimate& e) {
  const double overhead_s = c.cal.kernel_overhead_us * 1e-6;
  // A weight LoRA froze: its backward is the data gradient alone (one matmul where training
  // runs two); an adapter beside it launches three kernels more (x A, (x A) B, the add).
  const bool frozen = matrix && c.FrozenWeight(static_cast<std::size_t>(nt.node));
  if (frozen) ratio -= 1;
  if (frozen && c.Adapted(static_cast<std::size_t>(nt.node))) t += 3 * overhead_s;
  fb.forward_s += t + overhead_s;
  if (!matrix) fb.forward_vector_s += t + overhead_s;
  const auto node = static_cast<std::size_t>(nt.node);
  // Offloading remat brings the attention projections' outputs back from host memory instead of
  // computing them again (MaxText's offload policies: query/key/value/out_proj).
  const bool offloaded = c.remat == Remat::kOffload && c.facts.attention_projection[node];
  if (!c.facts.layer[node].empty() && !offloaded) {
    fb.layer_forward_s += t + overhead_s;
    if (!matrix) fb.layer_forward_vector_s += t + overhead_s;
  }
  e.components.forward_kernels += 1;
  double total = t + overhead_s;
  if (c.options.train) {
    const double kernels_bwd = matrix && !frozen ? 2 : 1;
    e.components.backward_kernels += kernels_bwd;
    const double tb = ratio * t + kernels_bwd * overhead_s;
    fb.backward_s += tb;
    total += tb;
  }
  if (attention) {
    fb.attention_s += total;
    fb.attention_forward_s += t + overhead_s;
  }
  if (c.facts.mlp_up[node]) fb.mlp_up_forward_s += t + overhead_s;
  nt.ms = total * 1e3;
  fb.times.push_back(nt);
}

// The folded BatchNorm a training step runs again after a conv: its output read and written once
// more (eager: added to the conv's kernel; a fused runtime: TimeKernels says where it runs).
double ImpliedBatchNormBytes(const OpCost& conv) { return 2 * conv.bytes_written; }

double ImpliedBatchNormSeconds(const StepContext& c, const OpCost& cost, Estimate& e) {
  const double bn = ImpliedBatchNormBytes(cost);
  e.components.vector_bytes += bn;
  return c.MemorySeconds(bn);
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
    KernelTime nt{id};
    // A fused activation reads its input and writes its result, both of the result's size.
    const bool activation = c.cal.fused_activations && c.facts.activation_root[ni];
    const double bytes =
        (activation ? 2 * cost.bytes_written : cost.bytes_read + cost.bytes_written) +
        (cost.cls == CostClass::kMatrix ? MatrixExtraBytes(c, n) : 0);
    const bool matrix = cost.cls == CostClass::kMatrix;
    const bool depthwise = c.facts.depthwise[ni];
    double t = depthwise ? DepthwiseMemorySeconds(c, bytes, e) : c.MemorySeconds(bytes);
    if (matrix) {
      const double tc = MatrixSeconds(c, n, cost, e, nt);
      nt.compute_bound = tc >= t;
      t = MatrixKernelSeconds(c, n.kind == OpKind::kMatMul, tc, t);
      fb.useful_flops += cost.flops * c.facts.UsefulShare(ni);
      if (c.options.train && c.facts.implied_batchnorm[ni]) {
        t += ImpliedBatchNormSeconds(c, cost, e) + overhead_s;
        e.components.forward_kernels += 1;
        e.components.backward_kernels += 1;
      }
    } else {
      e.components.vector_bytes += bytes;
    }
    const bool attention = n.op == Op::kAttention;
    AddKernel(c, t, matrix, attention, BackwardRatio(c, KindOf(matrix, depthwise, attention)), nt,
              fb, e);
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
    KernelTime nt{named != k.nodes.end() ? *named : k.root,
                  k.nodes.size() > 1 ? k.nodes.size() - 1 : 0};
    double tc = 0;
    double bytes = k.bytes_in + k.bytes_out;
    bool matrix = false;
    bool depthwise = false;
    bool has_matmul = false;
    bool attention = false;
    double batchnorm_bytes = 0;
    for (NodeId id : k.nodes) {
      const OpCost& cost = c.costs[static_cast<std::size_t>(id)];
      // A training BatchNorm first reads its input for the batch statistics, a pass of its own
      // before the kernel that normalizes (fused with its neighbours) reads it again.
      if (cost.known && c.options.train && c.graph.node(id).op == Op::kBatchNorm)
        bytes += cost.bytes_written;
      if (!cost.known || cost.cls != CostClass::kMatrix) continue;
      const Node& n = c.graph.node(id);
      matrix = true;
      depthwise |= c.facts.depthwise[static_cast<std::size_t>(id)];
      has_matmul |= n.kind == OpKind::kMatMul;
      attention |= n.op == Op::kAttention;
      tc += MatrixSeconds(c, n, cost, e, nt);
      bytes += MatrixExtraBytes(c, n);
      fb.useful_flops += cost.flops * c.facts.UsefulShare(static_cast<std::size_t>(id));
      if (c.options.train && c.facts.implied_batchnorm[static_cast<std::size_t>(id)])
        batchnorm_bytes += ImpliedBatchNormBytes(cost);
    }
    // XLA:TPU fuses a folded BatchNorm's work into the convolution's fusion; on a GPU the
    // convolution is a cuDNN call that no compiler fuses into, and the BatchNorm runs as a
    // kernel of its own after it.
    const bool batchnorm_apart = batchnorm_bytes > 0 && !c.target.is_tpu();
    if (!batchnorm_apart) bytes += batchnorm_bytes;
    if (!matrix) e.components.vector_bytes += bytes;
    const double tm = depthwise ? DepthwiseMemorySeconds(c, bytes, e) : c.MemorySeconds(bytes);
    nt.compute_bound = matrix && tc >= tm;
    AddKernel(c, matrix ? MatrixKernelSeconds(c, has_matmul, tc, tm) : tm, matrix, attention,
              BackwardRatio(c, KindOf(matrix, depthwise, attention)), nt, fb, e);
    if (batchnorm_apart) {
      e.components.vector_bytes += batchnorm_bytes;
      AddKernel(c, c.MemorySeconds(batchnorm_bytes), false, false,
                BackwardRatio(c, KindOf(false, false, false)), KernelTime{nt.node, 0}, fb, e);
    }
  }
  return fb;
}

}  // namespace

double AttentionEfficiency(const StepContext& c) {
  if (!c.options.attention_kernel.empty())
    return c.target.attention_kernels.at(c.options.attention_kernel);
  return c.cal.attention_efficiency.value_or(c.cal.matrix_efficiency);
}

// A kernel with a matrix op: its compute time and the time its bytes take, the shorter hidden
// behind the longer — as far as the calibration's matrix_memory_overlap says for a matmul, fully
// for a convolution (the published runs that chose the overlap are transformers'; the one
// convolutional run fits the roofline's max better).
double MatrixKernelSeconds(const StepContext& c, bool has_matmul, double compute_s,
                           double memory_s) {
  const double overlap = has_matmul ? c.cal.matrix_memory_overlap : 1.0;
  return std::max(compute_s, memory_s) + (1 - overlap) * std::min(compute_s, memory_s);
}

// Whether a node runs inside a kernel the eager framework fuses (attention, GELU/SiLU) rather than
// as a kernel of its own.
bool InsideFusedKernel(const StepContext& c, std::size_t node) {
  return (c.cal.fused_attention && c.facts.attention[node]) ||
         (c.cal.fused_activations && c.facts.inside_activation[node]);
}

// Whether a depthwise convolution runs on the calibration's own depthwise kernels: PyTorch
// hands fp16 ones to cuDNN (`use_cudnn_depthwise`), which the general factors describe.
bool OwnDepthwiseKernels(const StepContext& c) { return c.options.precision != Precision::kFp16; }

bool XlaOnGpu(const StepContext& c) {
  return !c.target.is_tpu() && c.runtime.model().name == "xla";
}

bool ChannelsLastConv(const StepContext& c, const Node& conv) {
  if (!c.cal.channels_last_conv_efficiency) return false;
  if (c.options.channels_last) return true;
  if (!XlaOnGpu(c)) return false;
  // An XLA program keeps its own types (element_bytes 0); another graph runs at the precision.
  if (c.element_bytes != 0) return c.options.precision != Precision::kFp32;
  const ValueId x = conv.input(0);
  const DType t = x == kNoValue ? DType::kUnknown : c.graph.value(x).type.dtype;
  return t == DType::kBFloat16 || t == DType::kFloat16;
}

ForwardBackward TimeForwardBackward(const StepContext& c, Estimate& e) {
  CountCoverage(c, e);
  return c.runtime.model().fused ? TimeKernels(c, e) : TimeOps(c, e);
}

}  // namespace tpudoctor

// Memory per chip: parameters, gradients, optimizer state, activations (saved, rematerialised,
// sharded) and transients; whether they fit and the largest batch that would.
#include <algorithm>
#include <cmath>
#include <optional>

#include "src/cost/saved_tensors.h"
#include "src/cost/sharding.h"
#include "src/cost/step.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// torch.onnx keeps one copy of initializers with equal contents (freshly initialised biases and
// norm scales) and re-exposes each duplicate through an Identity node: each is a parameter of its
// own in the model being trained.
bool IsDuplicatedInitializer(const Graph& graph, const Value& v) {
  if (v.producer == kNoNode) return false;
  const Node& n = graph.node(v.producer);
  return n.op == Op::kIdentity && n.inputs.size() == 1 && n.input(0) != kNoValue &&
         graph.value(n.input(0)).origin == ValueOrigin::kInitializer;
}

// The activation memory at the backward pass's peak: the saved tensors live then (activations)
// and the gradient buffers beside them (transients: `transient_factor` times the largest tensor
// of the part being differentiated).
struct ActivationPeak {
  double activations = 0;
  double transients = 0;
};

// The head's transients: the gradient of its largest tensor beside it. When that tensor is the
// logits a loss alone reads, XLA computes their gradient (softmax minus the one-hot labels, an
// elementwise fusion) after the logits' last use, and its buffer assignment lets an elementwise
// fusion's result take the buffer of an operand that dies there
// (HloDataflowAnalysis::CanShareOperandBufferWithUser): the gradient replaces the logits instead
// of adding to them. Eager frameworks keep the loss's own saved softmax beside both.
double HeadTransients(const StepContext& c, const SavedPart& head) {
  const bool in_place = head.largest_feeds_loss && c.runtime.model().name == "xla";
  return head.largest * std::max(0.0, c.cal.transient_factor - (in_place ? 1 : 0));
}

// The loss head run in `tiles` chunks of tokens (EstimateOptions::vocab_tiles): what it keeps and
// its largest tensor, the logits, are one chunk's.
SavedTensors WithTiledHead(const SavedTensors& st, int tiles) {
  SavedTensors out = st;
  const double cut = st.head.saved * (1 - 1.0 / tiles);
  out.head.saved -= cut;
  out.saved -= cut;
  out.head.largest /= tiles;
  out.largest = out.head.largest;
  for (const auto& [key, part] : st.by_layer) out.largest = std::max(out.largest, part.largest);
  return out;
}

// What the layers keep (not the stem before them, nor the head after them).
double LayerSaved(const SavedTensors& st) {
  double sum = 0;
  for (const auto& [key, part] : st.by_layer) {
    if (!key.empty()) sum += part.saved;
  }
  return sum;
}

// Without rematerialisation every saved tensor is live when the backward pass starts; with dots
// only the matmul/conv inputs are kept (save_dot_except_mlpwi: not the MLP down-projections'). A
// pipeline's first stage keeps its layers' share for every micro-batch in flight; its last stage
// one micro-batch's share and the head's: the larger.
ActivationPeak WholeModelPeak(const StepContext& c, const SavedTensors& st) {
  double keep = c.cal.saved_activation_share;
  if (c.remat == Remat::kDots || c.remat == Remat::kDotsExceptMlpUp) {
    const double kept = st.matrix - (c.remat == Remat::kDotsExceptMlpUp ? st.mlp_down_inputs : 0);
    keep = st.saved > 0 ? kept / st.saved : 0;
  }
  double saved = st.saved * keep;
  if (c.Stages() > 1) {
    const double layers = LayerSaved(st) * keep / c.Stages();
    saved =
        std::max(layers * c.InFlightMicroBatches(), layers + (st.saved - LayerSaved(st)) * keep);
  }
  return {saved, st.head.largest >= st.largest ? HeadTransients(c, st.head)
                                               : st.largest * c.cal.transient_factor};
}

// Per-layer rematerialisation, phase by phase of the backward pass: the head's backward runs
// first (its saved tensors and the stem's, the kept layer boundaries, the gradient of its largest
// tensor), then each layer's in turn after its forward pass runs again (its saved tensors, the
// stem's, the boundaries, its largest gradient). The peak is the larger phase. Kept boundaries:
// every layer's (`layer`), or, offloaded to host memory, only the input of the layer being
// recomputed, brought back; with them the attention outputs a layer keeps
// (EstimateOptions::keep_attention_output).
ActivationPeak PerLayerPeak(const StepContext& c, const SavedTensors& st) {
  const double factor = c.cal.transient_factor;
  const double kept =
      c.layers.boundary_bytes + (c.options.keep_attention_output
                                     ? c.facts.attention_output_elements * c.ActivationBytes()
                                     : 0);
  // A pipeline stage keeps its layers' boundaries for each micro-batch in flight.
  const double all_boundaries = kept / c.Stages();
  const double one_boundary = c.layers.count > 0 ? kept / c.layers.count : 0;
  const double kept_boundaries = all_boundaries * c.InFlightMicroBatches();
  double stem = 0;
  ActivationPeak layer_phase;
  for (const auto& [key, part] : st.by_layer) {
    if (key.empty()) {
      stem = part.saved;
      continue;
    }
    const ActivationPeak p{part.saved, part.largest * factor};
    if (p.activations + p.transients > layer_phase.activations + layer_phase.transients)
      layer_phase = p;
  }
  const bool offload = c.remat == Remat::kOffload;
  layer_phase.activations += stem + (offload ? one_boundary : kept_boundaries);
  const ActivationPeak head_phase{stem + st.head.saved + (offload ? 0 : all_boundaries),
                                  HeadTransients(c, st.head)};
  return head_phase.activations + head_phase.transients >
                 layer_phase.activations + layer_phase.transients
             ? head_phase
             : layer_phase;
}

// Sharding: FSDP, context and tensor parallelism divide the parameter state (`share` of it left
// after expert parallelism took the experts' 1/ep: StepContext::ExpertStateShare; of that, a
// pipeline stage holds `stage_share`: StepContext::StageParams); tensor and
// context parallelism divide activations too (sequence-parallel layout between the matmuls; a
// context group's devices each hold their part of the sequence), and a context-parallel
// attention holds one layer's keys and values gathered whole (on a ring, two chunks of them), and
// their gradients backward, beside them. An FSDP chip also holds
// two gathered weights: XLA's SPMD partitioner all-gathers each sharded parameter just before the
// op that reads it, and the latency-hiding scheduler starts the next gather while that op runs (one
// ahead, within its memory limit) — two weight tensors, not two whole layers (which had GPT-3
// 175B's published v6e-256 run, about 3.6 GB of weights a layer, "not fit").
void ShardMemory(const StepContext& c, double share, double optimizer_share, double stage_share,
                 Estimate& e) {
  MemoryBreakdown& m = e.memory;
  const double shards = c.StateShards() / share / stage_share;
  const double optimizer_shards = c.StateShards() / optimizer_share / stage_share;
  const double split = c.WorkSplit();
  m.weights /= shards;
  m.gradients /= shards;
  m.optimizer_state /= optimizer_shards;
  m.master_weights /= optimizer_shards;
  m.activations /= split;
  m.transients /= split;
  m.padding_waste /= split;
  if (c.parallel.context > 1) {
    // Gathered whole, or on a ring two chunks of 1/cp each: the one attended to and the next
    // arriving (EstimateOptions::ring_context).
    const double held = c.options.ring_context ? 2.0 / c.parallel.context : 1.0;
    m.transients += (c.options.train ? 2 : 1) * held * c.facts.largest_attention_kv_elements *
                    c.ActivationBytes() / c.parallel.tensor;
  }
  if (c.WeightGatherGroup() > 1) {
    m.transients += 2 * c.layers.largest_weight / c.parallel.tensor * c.ActivationBytes();
  }
  e.components.state_bytes = m.weights + m.gradients + m.optimizer_state + m.master_weights;
}

}  // namespace

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
    const bool gathered_only = !v.users.empty() && std::ranges::all_of(v.users, [&](NodeId u) {
      const Node& user = graph.node(u);
      return user.kind == OpKind::kGather && !user.inputs.empty() && user.input(0) == v.id;
    });
    if (gathered_only) p.gathered_only += n;
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

// Phase 4: memory per chip: weights, gradients, optimizer state, activations, transients.
void MemoryPerChip(const StepContext& c, const Parameters& params, Estimate& e) {
  const EstimateOptions& options = c.options;
  MemoryBreakdown& m = e.memory;
  const bool mixed = options.precision == Precision::kMixed;
  // bf16-params: weights, gradients and optimizer state all in bf16, no fp32 copy (MaxText's
  // weight_dtype=bfloat16; optax keeps Adam's moments in the parameters' dtype).
  const bool bf16_params = options.precision == Precision::kBf16Params;
  const double state_scale = bf16_params ? 0.5 : 1.0;
  // Megatron's distributed optimizer holds the weights in the compute precision (no fp32 copy to
  // update: StepContext::MegatronLayout).
  const bool narrow_weights = mixed || bf16_params || c.MegatronLayout();
  // LoRA (training only): the frozen weights in 16 bits (in fp8 where Megatron's FP8 recipes keep
  // them so: StepContext::ModelWeightBytes), the adapters in fp32 with their gradients and state.
  const double lora = c.lora.params;
  const double trained = lora > 0 ? lora : params.count;
  // A server holds the weights as it reads them (StepContext::ServedWeightBytes). Weight-only int8
  // holds them at one byte, served or not; narrow weights take the compute dtype's width, or fp8's
  // under Megatron's FP8 layout (StepContext::ModelWeightBytes).
  const double weight_bytes = options.serve                                  ? c.ServedWeightBytes()
                              : options.precision == Precision::kInt8Weights ? 1
                              : narrow_weights                               ? c.ModelWeightBytes()
                                                                             : 4;
  const double frozen_bytes = c.MegatronLayout() ? c.ModelWeightBytes() : 2;
  m.weights = (lora > 0 ? params.count * frozen_bytes + lora * 4 : params.count * weight_bytes) +
              params.constant_bytes;
  if (options.train) {
    m.gradients = lora > 0 ? lora * 4 : params.count * c.GradientBytes();
    m.master_weights = lora == 0 && (mixed || c.MegatronLayout()) ? params.count * 4 : 0;
    switch (options.optimizer) {
      case Optimizer::kSgd:
        m.optimizer_state = 0;
        break;
      case Optimizer::kMomentum:
        m.optimizer_state = 4 * trained * state_scale;
        break;
      case Optimizer::kAdam:
        m.optimizer_state = 8 * trained * state_scale;
        break;
      case Optimizer::kAdafactor:
        // An adapter's factors are about as large as the adapter: its rows or columns are r.
        m.optimizer_state = (lora > 0 ? 4 * lora : params.adafactor_state) * state_scale;
        break;
    }
  }
  double largest = 0;
  ActivationBytes act;
  if (options.train) {
    auto& saved = c.memo->saved;
    const int weight_input_bytes =
        options.precision == Precision::kFp8 && c.cal.fp8_saves_quantized_inputs ? 1 : 0;
    const bool lora_on = options.lora_rank > 0;
    const auto key = std::make_tuple(c.target.name, &c.cal, weight_input_bytes,
                                     lora_on ? static_cast<int>(options.lora_targets) : -1);
    auto known = saved.find(key);
    if (known == saved.end()) {
      // LoRA's frozen weight matmuls without an adapter keep no input.
      std::vector<bool> frozen;
      if (lora_on) {
        frozen.resize(c.graph.nodes().size());
        for (std::size_t i = 0; i < frozen.size(); ++i)
          frozen[i] = c.FrozenWeight(i) && !c.Adapted(i);
      }
      known =
          saved
              .emplace(key, ComputeSavedTensors(c.graph, c.costs, c.facts, c.cal, c.target,
                                                c.element_bytes, weight_input_bytes,
                                                c.fusion ? &*c.fusion : nullptr, c.written, frozen))
              .first;
    }
    std::optional<SavedTensors> tiled;
    if (options.vocab_tiles > 1) tiled = WithTiledHead(known->second, options.vocab_tiles);
    const SavedTensors& st = tiled ? *tiled : known->second;
    act.natural_total = st.natural;
    act.layout_total = st.layout;
    largest = st.largest;
    const ActivationPeak peak =
        RematPerLayer(c.remat) ? PerLayerPeak(c, st) : WholeModelPeak(c, st);
    m.activations = peak.activations;
    m.transients = peak.transients;
    e.components.saved_bytes = st.saved;
  } else {
    act = LiveActivations(c, e, largest);
  }
  m.fixed = c.cal.fixed_memory_bytes;
  e.components.largest_tensor_bytes = largest;
  // The tile padding inside the activations the peak holds: the padded share of the tensors the
  // step makes (their tiled bytes over their natural ones), applied to the activations at the
  // peak. With remat, or at inference, the peak holds a few of them, not the step's total.
  m.padding_waste = act.layout_total > 0
                        ? m.activations * (act.layout_total - act.natural_total) / act.layout_total
                        : 0;
  ShardMemory(c, c.ExpertStateShare(params.count), c.OptimizerShare(params.count),
              params.count > 0 ? c.StageParams(params.count) / params.count : 1, e);
  // With every layer's input kept, the backward pass frees them one layer at a time as it
  // produces that layer's gradients: kept inputs and gradients together peak at the larger of
  // the two, so only the gradients beyond the kept inputs add to the peak.
  if (options.train && c.remat == Remat::kLayer)
    m.gradients = std::max(0.0, m.gradients - c.layers.boundary_bytes / c.Stages() / c.WorkSplit());
}

// Phase 5: whether it fits, and the largest batch that would (activations scale with the batch).
void FitAndMaxBatch(const StepContext& c, Estimate& e) {
  const MemoryBreakdown& m = e.memory;
  e.hbm_bytes = *c.target.hbm_gib / std::max(1, c.target.devices_per_chip) * kGiB;
  const double usable = e.hbm_bytes * c.cal.usable_hbm_share;
  e.fits = m.total() <= usable;
  const double per_sample = (m.activations + m.transients) / static_cast<double>(c.options.batch);
  const double fixed_part = m.total() - m.activations - m.transients;
  e.max_batch = per_sample > 0 && usable > fixed_part
                    ? static_cast<std::int64_t>((usable - fixed_part) / per_sample)
                    : 0;
}

}  // namespace tpudoctor

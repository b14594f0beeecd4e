#include "tpudoctor/cost/estimate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "src/cost/sharding.h"
#include "src/cost/step.h"
#include "tpudoctor/cost/fusion.h"
#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
Layers FindLayers(const Graph& g, const TargetSpec& target, int eb, const GraphFacts& facts) {
  Layers out;
  std::set<std::string_view> keys;  // the layers that read weights (views of facts.layer)
  std::set<ValueId> layer_weights;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    const std::string& key = facts.layer[static_cast<std::size_t>(id)];
    if (key.empty()) continue;
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      const Value& v = g.value(in);
      if (v.origin != ValueOrigin::kInitializer || !IsFloat(v.type.dtype)) continue;
      keys.insert(key);
      if (layer_weights.insert(in).second)
        out.layer_params += static_cast<double>(v.type.shape.NumElements().value_or(0));
      out.largest_weight =
          std::max(out.largest_weight, static_cast<double>(v.type.shape.NumElements().value_or(0)));
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
  out.count = static_cast<int>(keys.size());
  return out;
}

namespace {

// Why `--attention-kernel kernel` cannot apply to `target`.
std::string AttentionKernelRefusal(const TargetSpec& target, const std::string& kernel) {
  if (target.is_tpu()) {
    return "--attention-kernel " + kernel + ": TPUs run XLA's attention (splash) kernels; the " +
           "option names GPU kernels";
  }
  std::string known;
  for (const auto& [name, share] : target.attention_kernels)
    known += (known.empty() ? "" : ", ") + name;
  return "--attention-kernel " + kernel + ": " + target.name +
         (known.empty() ? " lists no attention kernels"
                        : " lists no published rate for it (it lists: " + known + ")");
}

// The ten slowest kernels, slowest first, named for the report.
std::vector<NodeTime> TopNodes(const Graph& graph, std::vector<KernelTime> times) {
  std::sort(times.begin(), times.end(),
            [](const KernelTime& a, const KernelTime& b) { return a.ms > b.ms; });
  if (times.size() > 10) times.resize(10);
  std::vector<NodeTime> out;
  out.reserve(times.size());
  for (const KernelTime& t : times) {
    const Node& n = graph.node(t.node);
    out.push_back({t.node, n.name,
                   n.QualifiedOp() + (t.fused > 0 ? "+" + std::to_string(t.fused) : ""), t.ms,
                   t.compute_bound, t.mxu_utilization});
  }
  return out;
}

}  // namespace

struct EstimateCache::Entry {
  Entry(const Graph& g, int eb, bool fused_kernels, bool training)
      : graph(&g),
        element_bytes(eb),
        fused(fused_kernels),
        train(fused_kernels && training),
        costs(ComputeOpCosts(g, eb)),
        facts(AnalyzeGraph(g)),
        params(CountParameters(g)) {
    if (!fused) return;
    FusionOptions fo;
    fo.element_bytes = eb;
    fo.train = train;
    fusion = PlanFusions(g, costs, fo);
    written.assign(g.values().size(), false);
    for (const FusionKernel& k : fusion->kernels) {
      for (ValueId v : k.written) written[static_cast<std::size_t>(v)] = true;
    }
  }
  const Graph* graph;
  int element_bytes;
  bool fused;
  bool train;  // a training step's plan (only a fused runtime's plan depends on it)
  std::vector<OpCost> costs;
  GraphFacts facts;
  Parameters params;
  std::optional<FusionPlan> fusion;
  std::vector<bool> written;
  mutable TargetMemo memo;
};

EstimateCache::EstimateCache() = default;
EstimateCache::~EstimateCache() = default;

const EstimateCache::Entry& EstimateCache::Get(const Graph& graph, int element_bytes, bool fused,
                                               bool train) {
  for (const auto& e : entries_) {
    if (e->graph == &graph && e->element_bytes == element_bytes && e->fused == fused &&
        e->train == (fused && train))
      return *e;
  }
  entries_.push_back(std::make_unique<Entry>(graph, element_bytes, fused, train));
  return *entries_.back();
}

const std::vector<OpCost>* EstimateCache::FindCosts(const Graph& graph, int element_bytes) const {
  for (const auto& e : entries_) {
    if (e->graph == &graph && e->element_bytes == element_bytes) return &e->costs;
  }
  return nullptr;
}

bool SameStep(const EstimateOptions& a, const EstimateOptions& b) {
  return a.train == b.train && a.optimizer == b.optimizer && a.precision == b.precision &&
         a.batch == b.batch && a.micro_batches == b.micro_batches &&
         a.distributed_optimizer == b.distributed_optimizer &&
         a.dedup_expert_dispatch == b.dedup_expert_dispatch &&
         a.overlap_expert_comm == b.overlap_expert_comm && a.ring_context == b.ring_context &&
         a.vocab_tiles == b.vocab_tiles && a.keep_attention_output == b.keep_attention_output &&
         a.attention_kernel == b.attention_kernel && a.lora_rank == b.lora_rank &&
         a.lora_targets == b.lora_targets && a.chips == b.chips && a.parallel == b.parallel &&
         a.slices == b.slices && a.dcn == b.dcn && a.remat == b.remat && a.runtime == b.runtime &&
         a.channels_last == b.channels_last && a.dataset_size == b.dataset_size &&
         a.serve == b.serve && a.usd_per_chip_hour == b.usd_per_chip_hour &&
         a.calibration == b.calibration;
}

// Expert parallelism shards the experts a model config declared (ModelFacts::experts), whole
// experts to each device.
Result<Ok> CheckExpertParallelism(const Graph& graph, const Parallelism& p) {
  if (p.expert == 1) return Ok{};
  const std::int64_t experts = graph.facts().experts;
  if (experts < 2) {
    return MakeError("--parallel ep=" + std::to_string(p.expert) +
                     ": the model has no MoE experts to shard (expert parallelism is estimated for "
                     "MoE model configs)");
  }
  if (experts % p.expert != 0) {
    return MakeError("--parallel ep=" + std::to_string(p.expert) + " does not divide the " +
                     std::to_string(experts) + " experts of each MoE layer");
  }
  return Ok{};
}

Result<Estimate> EstimateStep(const Graph& graph, const TargetSpec& target,
                              const EstimateOptions& options) {
  if (options.batch < 1) return MakeError("the batch must be at least 1");
  if (options.serve && options.train) return MakeError("serving estimates are of inference");
  if (options.serve && options.parallel.context > 1)
    return MakeError("--parallel cp= is estimated for training and prefill, not serving");
  if (options.serve && (options.serve->prompt_tokens < 1 || options.serve->output_tokens < 1 ||
                        options.serve->concurrency < 1))
    return MakeError("serving needs at least one prompt token, output token and request");
  if (options.serve && options.serve->kv_cache_length < 0)
    return MakeError("a static KV cache's length must be positive (0: a paged cache)");
  // A static cache holds each sequence whole: a shorter one could not serve the request asked.
  if (options.serve && options.serve->kv_cache_length > 0 &&
      options.serve->kv_cache_length < options.serve->prompt_tokens + options.serve->output_tokens)
    return MakeError("a static KV cache of " + std::to_string(options.serve->kv_cache_length) +
                     " tokens a slot cannot hold a request of " +
                     std::to_string(options.serve->prompt_tokens) + " prompt and " +
                     std::to_string(options.serve->output_tokens) +
                     " output tokens (pass --kv-cache-length of at least their sum)");
  if (options.micro_batches < 1 || options.micro_batches > 1 << 20)
    return MakeError("the micro-batches per step must be between 1 and 1048576");
  // The global batch (an int64) must hold batch x micro-batches x devices x slices.
  if (static_cast<double>(options.batch) * options.micro_batches * std::max(1, options.chips) *
          std::max(1, target.devices_per_chip) * options.slices >
      1e15)
    return MakeError("batch x micro-batches x devices x slices is more than 1e15 samples a step");
  if (auto refusal = TrainingPrecisionRefusal(options.precision); refusal && options.train)
    return MakeError(*refusal);
  if (options.serve && options.parallel.pipeline > 1)
    return MakeError("--parallel pp= is estimated for training and prefill, not serving");
  if (options.slices < 1 || options.slices > 1024)
    return MakeError("the number of slices must be between 1 and 1024");
  // Multislice (slices joined by the data-centre network) is a TPU's; GPUs on many hosts are one
  // target of that many GPUs, whose scale-out network the collectives already cross.
  if (options.slices > 1 && !target.is_tpu())
    return MakeError("--slices joins TPU slices over the data-centre network; for " + target.name +
                     " on several hosts pass a target of that many GPUs (e.g. " + target.name +
                     "-16)");
  if (!options.attention_kernel.empty() &&
      !target.attention_kernels.contains(options.attention_kernel))
    return MakeError(AttentionKernelRefusal(target, options.attention_kernel));
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
  if (auto ep = CheckExpertParallelism(graph, *parallel); !ep) return ep.error();
  if ((options.dedup_expert_dispatch || options.overlap_expert_comm) && parallel->expert <= 1)
    return MakeError(
        "the expert dispatch options describe expert parallelism's all-to-alls; add "
        "--parallel ep=N");
  if (options.overlap_expert_comm && !options.train)
    return MakeError(
        "overlapping the expert all-to-alls with another micro-batch's compute "
        "describes a training step");
  if (options.ring_context && parallel->context <= 1)
    return MakeError("a ring passes context parallelism's keys and values; add --parallel cp=N");
  if (options.vocab_tiles < 1 || options.vocab_tiles > 65536)
    return MakeError("the vocabulary tiles must be between 1 and 65536");
  if (options.lora_rank < 0 || options.lora_rank > 65536)
    return MakeError("the LoRA rank must be between 1 and 65536");
  if (options.lora_rank > 0 && !options.train)
    return MakeError("LoRA describes a training step; add --train");
  if (options.vocab_tiles > 1 && !options.train)
    return MakeError("vocabulary tiling splits a training step's loss head");
  if (options.keep_attention_output && (!options.train || !RematPerLayer(options.remat)))
    return MakeError(
        "keeping the attention output spares per-layer rematerialisation a pass; train with "
        "--remat layer or offload");
  const Runtime runtime = ResolveRuntime(options.runtime, target, graph, options.serve.has_value());
  std::unique_ptr<EstimateCache::Entry> own;
  const bool fused = runtime.model().fused;
  const EstimateCache::Entry& derived =
      options.cache
          ? options.cache->Get(graph, eb, fused, options.train)
          : *(own = std::make_unique<EstimateCache::Entry>(graph, eb, fused, options.train));
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
  c.memo = &derived.memo;
  c.lora = c.CountLoraAdapters();
  if (options.lora_rank > 0 && c.lora.params <= 0)
    return MakeError("LoRA adapts dense weight matmuls of a model's layers (" +
                     std::string(NameOf(options.lora_targets)) + "), and this model has none");
  auto known = c.memo->layers.find(target.name);
  c.layers = known != c.memo->layers.end()
                 ? known->second
                 : c.memo->layers.emplace(target.name, FindLayers(graph, target, eb, c.facts))
                       .first->second;
  if (c.parallel.pipeline > 1 &&
      static_cast<long long>(c.parallel.pipeline) * c.parallel.virtual_stages >
          std::max(1, c.layers.count)) {
    return MakeError("--parallel pp=" + std::to_string(c.parallel.pipeline) +
                     (c.parallel.virtual_stages > 1
                          ? ",vp=" + std::to_string(c.parallel.virtual_stages)
                          : std::string()) +
                     " cuts the model into more pipeline chunks than its " +
                     std::to_string(c.layers.count) + " layers");
  }
  const bool per_layer = RematPerLayer(options.remat);
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
  const Parameters& params = derived.params;
  AssembleStep(c, fb, params, e);
  MemoryPerChip(c, params, e);
  FitAndMaxBatch(c, e);
  Prices(c, e);
  if (options.serve) {
    if (auto served = EstimateServing(c, params, e); !served) return served.error();
  }
  e.top_nodes = TopNodes(graph, std::move(fb.times));
  e.assumptions = Assumptions(c, e);
  return e;
}

}  // namespace tpudoctor

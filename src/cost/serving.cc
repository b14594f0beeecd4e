// Serving: the prefill of one prompt (the inference step of the graph, which is the model at
// batch 1 over the prompt) and the decode step of every sequence in flight, from what the graph
// says per token — weight bytes, matmul FLOPs, the K and V each attention keeps, the attention's
// FLOPs per context token — at the device's rates and calibration.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "src/cost/sharding.h"
#include "src/cost/step.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// One attention op, per token: the K and V it keeps, its FLOPs per context token it attends to,
// and how far back it attends (0: the whole context; a sliding window otherwise).
struct AttentionLayer {
  double kv_elements = 0;
  double flops_per_context = 0;
  double window = 0;
  // Its cache is whole on every tensor-parallel device (a latent all heads share) rather than
  // split by heads.
  bool replicated = false;
  // Query heads per key/value head (1 without grouped-query attention).
  double group = 1;
  // The context tokens it reads at a context of `context`.
  double Reach(double context) const { return window > 0 ? std::min(context, window) : context; }
};

// What a decoder does per token: its attention ops and its other matmuls.
struct PerToken {
  double tokens = 0;        // in the graph (batch x prompt)
  double matmul_flops = 0;  // outside attention and the MoE experts, per token
  double expert_flops = 0;  // the MoE experts' matmuls, per token (its routed experts')
  double moe_layers = 0;
  std::vector<AttentionLayer> attention;
  // Summed over the attention ops at a context of `context` tokens.
  double KvElements(double context) const { return KvElementsPerDevice(context, 1); }
  // What one of `tp` tensor-parallel devices holds of it, or reads per decode step (a kernel that
  // reads it once per query head: `per_query_head`).
  double KvElementsPerDevice(double context, double tp, bool per_query_head = false) const {
    double sum = 0;
    for (const AttentionLayer& a : attention) {
      sum += a.kv_elements * a.Reach(context) / (a.replicated ? 1 : tp) *
             (per_query_head ? a.group : 1);
    }
    return sum;
  }
  double AttentionFlops(double context) const {
    double sum = 0;
    for (const AttentionLayer& a : attention) sum += a.flops_per_context * a.Reach(context);
    return sum;
  }
};

// Rows (batch x sequence) and row width of an attention operand: [batch, seq, width] or
// [batch, heads, seq, head_dim].
std::optional<std::pair<double, double>> RowsAndWidth(const TensorType& t) {
  const auto& d = t.shape.dims();
  if (!t.shape.is_static() || (d.size() != 3 && d.size() != 4)) return std::nullopt;
  const auto v = [&](std::size_t i) { return static_cast<double>(d[i].value()); };
  if (d.size() == 3) return std::make_pair(v(0) * v(1), v(2));
  return std::make_pair(v(0) * v(2), v(1) * v(3));
}

Result<PerToken> CountPerToken(const StepContext& c) {
  PerToken p;
  double matmul_flops = 0, expert_flops = 0;
  std::set<std::string> moe_layers;
  for (const Node& n : c.graph.nodes()) {
    const auto id = static_cast<std::size_t>(n.id);
    const OpCost& cost = c.costs[id];
    if (n.op != Op::kAttention) {
      const bool expert = c.facts.expert_matmul[id];
      if (expert) moe_layers.insert(c.facts.layer[id]);
      if (cost.known && cost.cls == CostClass::kMatrix)
        (expert ? expert_flops : matmul_flops) += cost.flops;
      continue;
    }
    if (n.inputs.size() < 3 || n.input(0) == kNoValue || n.input(1) == kNoValue ||
        n.input(2) == kNoValue)
      return MakeError("an attention op of the model lacks its Q, K or V input");
    auto q = RowsAndWidth(c.graph.value(n.input(0)).type);
    auto k = RowsAndWidth(c.graph.value(n.input(1)).type);
    auto v = RowsAndWidth(c.graph.value(n.input(2)).type);
    if (!q || !k || !v) return MakeError("serving needs static Q, K and V shapes");
    p.tokens = q->first;
    // A chunked layer (Llama 4) attends to, and keeps, at most its chunk: read as a window,
    // an upper bound (within a chunk a token sees the chunk's tokens before it).
    const double window =
        static_cast<double>(n.IntAttr("window").value_or(n.IntAttr("chunk").value_or(0)));
    const double latent = static_cast<double>(n.IntAttr("latent_kv").value_or(0));
    if (latent > 0) {
      // Latent attention as the engines serve it (vLLM's and SGLang's MLA backends; the
      // DeepSeek-V2 paper's absorbed form): the cache keeps the latent and the rotary key; each
      // head scores the context in the latent-plus-rotary space and sums the latent. The heads
      // share the latent, so tensor parallelism (which splits heads) keeps it whole on every
      // device (why those engines offer data-parallel attention for it).
      const double rope = static_cast<double>(n.IntAttr("latent_rope").value_or(0));
      const double heads = static_cast<double>(n.IntAttr("q_num_heads").value_or(0));
      p.attention.push_back({latent + rope, 2 * heads * (2 * latent + rope), window, true});
      continue;
    }
    // Q K^T, 2 FLOPs per query element and context token, and the weighted sum of V, 2 per
    // head's value element (a query head's value width is V's over K's times its key width).
    const double pv = k->second > 0 ? q->second * v->second / k->second : q->second;
    const double group = k->second > 0 ? std::max(1.0, q->second / k->second) : 1;
    p.attention.push_back({k->second + v->second, 2 * (q->second + pv), window, false, group});
  }
  if (p.tokens <= 0)
    return MakeError(
        "serving estimates need a decoder whose attention is one op (the model configs build "
        "one per layer; an export that spells attention out as matmuls and a softmax is not "
        "read for its KV cache yet)");
  p.matmul_flops = matmul_flops / p.tokens;
  p.expert_flops = expert_flops / p.tokens;
  p.moe_layers = static_cast<double>(moe_layers.size());
  return p;
}

// The prefills of `prompts` requests as the engines batch them (static batching's context phase;
// continuous batching prefills several prompts in a step, chunked): the weights are read once for
// all of them, and each prompt adds its own work — its step less that read, and at least
// `prompt_compute_ms`, its matmuls and causal attention at the matrix rate; `expert_rest_ms` is
// what a prompt's step leaves out of its work on an expert-parallel device (ServingRound).
double BatchedPrefillMs(const ServingEstimate& out, double prompt_compute_ms, double expert_rest_ms,
                        double prompts) {
  const double per_prompt_ms =
      std::max(prompt_compute_ms, out.ttft_ms - out.decode_weights_ms + expert_rest_ms);
  return std::max(out.decode_weights_ms, prompts * per_prompt_ms);
}

// A replica's round of serving: the prefills of the requests in flight and `output_tokens` decode
// steps. Built once per estimate; Ms() prices a round at any batch (the steady state's, an offline
// job's last wave).
class ServingRound {
 public:
  // `out` already holds the mean context (Ms() reads the weight read and the TTFT from the
  // estimate it fills); `e` is the prefill step's estimate (its kernels).
  ServingRound(const StepContext& c, const PerToken& p, const Estimate& e,
               const ServingEstimate& out)
      : c_(c),
        p_(p),
        s_(*c.options.serve),
        replicas_(static_cast<double>(c.parallel.data) * c.options.slices) {
    // Expert parallelism over `ep` devices of a replica runs the attention data parallel (vLLM's
    // and SGLang's data-parallel attention, TensorRT-LLM's enable_attention_dp): each device
    // serves its own share of the sequences with the whole attention and the dense weights, and
    // holds 1/ep of the experts, which see every device's routed tokens.
    kv_bytes_ = KvCacheDtypeBytes(s_.kv_cache_dtype).value_or(c.ActivationBytes());
    // A paged cache is read at the mean context; a static one whole, every slot's full length.
    read_context_ =
        s_.kv_cache_length > 0 ? static_cast<double>(s_.kv_cache_length) : out.mean_context;
    // Each decode collective also takes the target's measured latency of a small collective (a
    // decode step's all-reduces are a sequence's hidden state: kilobytes, where the latency is
    // the cost).
    latency_ms_ = c.target.collective_latency_us.value_or(0) * 1e-3;
    launch_ms_ = e.components.forward_kernels * c.cal.kernel_overhead_us * 1e-3;
    // A prompt attends, causally, to half its length on average.
    const double prompt = static_cast<double>(s_.prompt_tokens);
    prompt_compute_ms_ =
        MatrixMs(prompt * (p.matmul_flops + p.expert_flops + p.AttentionFlops(prompt / 2)));
    // Expert parallelism: a device prefills its own prompts' attention and dense layers and, on
    // its experts, the tokens every device routes to them, as much expert work as its own prompts
    // carry (balanced routing). The step of one prompt (TTFT) spreads that prompt's expert work
    // over the ep devices, so each prompt of a round adds the other (ep - 1) / ep of it.
    expert_rest_ms_ = MatrixMs(prompt * p.expert_flops) * (Ep() - 1) / Ep();
  }

  const ServingOptions& Options() const { return s_; }
  // The data-parallel replicas of the slices, each serving its own share of the requests.
  double Replicas() const { return replicas_; }
  double KvBytes() const { return kv_bytes_; }

  // Milliseconds of a round with `batch` requests in flight on the replica; fills in `o`'s
  // decode step (its weight read and TTFT already there) and prefill share.
  double Ms(double batch, ServingEstimate& o) const {
    const double tp = c_.parallel.tensor, ep = Ep();
    const double local = batch / ep;
    const double bandwidth = c_.rates.bandwidth * c_.cal.memory_efficiency;
    o.decode_kv_ms = local * p_.KvElementsPerDevice(read_context_, tp, s_.kv_reads_per_query_head) *
                     kv_bytes_ / bandwidth * 1e3;
    // A device's experts run the routed tokens of the whole replica, 1/ep of them.
    const double matmul_ms = MatrixMs(local * p_.matmul_flops + batch * p_.expert_flops / ep);
    const double attention_ms = MatrixMs(local * p_.AttentionFlops(read_context_));
    o.decode_compute_ms = matmul_ms + attention_ms;
    const double link = c_.target.ici_gbps.value_or(0) * 1e9 * c_.cal.ici_share;
    // Two all-reduces per layer of each sequence's hidden state (after attention and after the
    // MLP), as in the prefill; the layer boundary is that state.
    if (tp > 1 && link > 0 && c_.layers.count > 0) {
      const double hidden_bytes = c_.layers.boundary_bytes / c_.layers.count / p_.tokens;
      o.decode_tensor_ms = c_.layers.count * 2 *
                           (2 * (tp - 1) / tp * local * hidden_bytes / link * 1e3 + latency_ms_);
    }
    // Expert parallelism: every MoE layer sends each routed copy of a device's tokens to the
    // device that holds its expert and takes the result back (two all-to-alls, as the training
    // step's exchange over the same group), each also paying the small-collective latency.
    if (ep > 1 && link > 0) {
      const double bytes = local * c_.ExpertExchangeBytes() / p_.tokens;
      o.decode_expert_ms = ExpertExchangeSeconds(c_, bytes) * 1e3 + 2 * p_.moe_layers * latency_ms_;
    }
    // The weight matmuls read the weights once, the attention each sequence's KV cache once;
    // each kernel's math overlaps with its reads as far as the calibration's
    // matrix_memory_overlap says. Every weight matmul of a decode step has the same FLOPs per
    // byte (2 x the sequences over the weight's bytes), so the matmuls together take what one
    // kernel of their summed reads and FLOPs takes.
    o.decode_step_ms = MatrixKernelSeconds(c_, true, matmul_ms, o.decode_weights_ms) +
                       MatrixKernelSeconds(c_, true, attention_ms, o.decode_kv_ms) +
                       o.decode_tensor_ms + o.decode_expert_ms + launch_ms_;
    // The time between a sequence's tokens includes the prefills of the others interleaved with
    // them: batched, or one at a time when bucketed. A replica's prompts, or with replicated
    // prefills every replica's, through one stream.
    const double prompts = s_.replicated_prefill ? batch * replicas_ : local;
    const double prefill_ms =
        s_.bucketed_prefill ? prompts * (o.ttft_ms + expert_rest_ms_)
                            : BatchedPrefillMs(o, prompt_compute_ms_, expert_rest_ms_, prompts);
    const double ms = prefill_ms + static_cast<double>(s_.output_tokens) * o.decode_step_ms;
    o.prefill_share = prefill_ms / ms;
    return ms;
  }

 private:
  double Ep() const { return c_.parallel.expert; }
  // Milliseconds of matrix work, split over the tensor-parallel devices.
  double MatrixMs(double flops) const {
    return flops / c_.parallel.tensor / (c_.rates.matrix_flops * c_.cal.matrix_efficiency) * 1e3;
  }

  const StepContext& c_;
  const PerToken& p_;
  const ServingOptions& s_;
  const double replicas_;
  double kv_bytes_ = 0, read_context_ = 0, latency_ms_ = 0, launch_ms_ = 0;
  double prompt_compute_ms_ = 0, expert_rest_ms_ = 0;
};

// An offline job (ServingOptions::requests): each replica's share of the requests in waves of
// `in_flight`, the last one what is left over at its own, smaller, decode steps. Sets the job's
// figures and its throughput in `out`.
void PriceOfflineJob(const ServingRound& round, double in_flight, double first_round_ms,
                     ServingEstimate& out) {
  const ServingOptions& s = round.Options();
  const double mine = std::ceil(static_cast<double>(s.requests) / round.Replicas());
  const double full = std::floor(mine / in_flight);
  const double rest = mine - full * in_flight;
  ServingEstimate tail = out;
  const double job_ms = full * first_round_ms + (rest > 0 ? round.Ms(rest, tail) : 0);
  out.requests = s.requests;
  out.waves = static_cast<std::int64_t>(full) + (rest > 0 ? 1 : 0);
  out.job_s = job_ms / 1e3;
  out.output_tokens_per_s =
      static_cast<double>(s.requests) * static_cast<double>(s.output_tokens) / out.job_s;
}

}  // namespace

double ServingUsableBytes(const StepContext& c, double hbm_bytes) {
  if (c.cal.serving_reserved_bytes) return std::max(0.0, hbm_bytes - *c.cal.serving_reserved_bytes);
  return hbm_bytes * c.cal.usable_hbm_share;
}

Result<Ok> EstimateServing(const StepContext& c, const Parameters& params, Estimate& e) {
  const ServingOptions& s = *c.options.serve;
  auto per_token = CountPerToken(c);
  if (!per_token) return per_token.error();
  const PerToken& p = *per_token;
  const double tp = c.parallel.tensor;
  const double ep = c.parallel.expert;
  const double shards = tp * c.parallel.fsdp;
  ServingEstimate out;
  out.mean_context = static_cast<double>(s.prompt_tokens) + s.output_tokens / 2.0;
  out.kv_cache_length = s.kv_cache_length;
  out.bucketed_prefill = s.bucketed_prefill;
  out.prefill_tokens = s.bucketed_prefill ? PrefillBucket(s.prompt_tokens) : s.prompt_tokens;
  const ServingRound round(c, p, e, out);
  const double replicas = round.Replicas();
  // An offline job never has more requests in flight than it has.
  const double requested =
      static_cast<double>(s.requests > 0 ? std::min(s.concurrency, s.requests) : s.concurrency);
  const double in_flight = std::ceil(requested / replicas);
  // fp8, int8 and int8w serving read 8-bit weights (StepContext::ServedWeightBytes). Expert
  // parallelism holds 1/ep of the experts a device.
  const double weight_bytes = c.ServedWeightBytes();
  const double expert_params = c.facts.expert_params * (1 - 1 / ep);  // held on other devices
  out.weight_bytes = (params.count - expert_params) * weight_bytes / shards;
  // A decode step reads every weight but a gathered-only table's (one row a sequence).
  const double read_weight_bytes =
      (params.count - expert_params - params.gathered_only) * weight_bytes / shards;
  out.decode_weights_ms = read_weight_bytes / (c.rates.bandwidth * c.cal.memory_efficiency) * 1e3;
  // The prefill of one prompt is the graph's inference step (over its bucket's length where the
  // prefills are bucketed).
  out.ttft_ms = e.step_ms;
  // Per token of context, every layer (a windowed layer's cache stops growing at its window).
  out.kv_bytes_per_token = p.KvElements(1) * round.KvBytes();
  // At steady state a replica runs, for every `in_flight` requests, their prefills and
  // `output_tokens` decode steps.
  const double first_round_ms = round.Ms(in_flight, out);
  out.tpot_ms = first_round_ms / static_cast<double>(s.output_tokens);
  out.output_tokens_per_s = replicas * in_flight / (out.tpot_ms / 1e3);
  if (s.requests > 0) PriceOfflineJob(round, in_flight, first_round_ms, out);
  out.output_tokens_per_s_per_chip =
      out.output_tokens_per_s / (static_cast<double>(c.options.chips) * c.options.slices);
  if (e.usd_per_hour && out.output_tokens_per_s > 0)
    out.usd_per_million_output_tokens = *e.usd_per_hour / (out.output_tokens_per_s * 3600) * 1e6;
  // Memory: the weights, every sequence's KV cache at its full length (a static cache's slot
  // length), one prefill's activations.
  const double held_context = static_cast<double>(
      s.kv_cache_length > 0 ? s.kv_cache_length : s.prompt_tokens + s.output_tokens);
  const double sequence_kv = p.KvElementsPerDevice(held_context, tp) * round.KvBytes();
  out.kv_cache_bytes = in_flight / ep * sequence_kv;
  const double usable = ServingUsableBytes(c, e.hbm_bytes);
  const double fixed = out.weight_bytes + e.memory.activations + e.memory.transients;
  out.fits = fixed + out.kv_cache_bytes <= usable;
  out.max_concurrency =
      usable > fixed ? static_cast<std::int64_t>((usable - fixed) / sequence_kv * replicas * ep)
                     : 0;
  e.serving = out;
  return Ok{};
}

}  // namespace tpudoctor

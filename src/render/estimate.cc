#include <nlohmann/json.hpp>

#include "tpudoctor/report/render.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

using nlohmann::ordered_json;

ordered_json Opt(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(); }

ordered_json EstimateJson(const Estimate& e) {
  ordered_json j;
  j["target"] = e.target;
  j["chips"] = e.chips;
  j["step_time_ms"] = e.step_ms;
  j["forward_ms"] = e.forward_ms;
  j["backward_ms"] = e.backward_ms;
  j["optimizer_ms"] = e.optimizer_ms;
  j["allreduce_ms"] = e.allreduce_ms;
  j["fsdp_ms"] = e.fsdp_ms;
  j["tensor_parallel_ms"] = e.tensor_ms;
  if (e.parallel.expert > 1) j["expert_parallel_ms"] = e.expert_ms;
  if (e.parallel.context > 1) j["context_parallel_ms"] = e.context_ms;
  if (e.parallel.pipeline > 1) {
    j["pipeline_bubble_ms"] = e.pipeline_bubble_ms;
    j["pipeline_send_ms"] = e.pipeline_send_ms;
  }
  if (e.micro_batches > 1) j["micro_batches"] = e.micro_batches;
  j["recompute_ms"] = e.recompute_ms;
  j["slices"] = e.slices;
  j["dcn_ms"] = e.dcn_ms;
  j["parallel"] = {
      {"data", e.parallel.data}, {"fsdp", e.parallel.fsdp}, {"tensor", e.parallel.tensor}};
  if (e.parallel.expert > 1) j["parallel"]["expert"] = e.parallel.expert;
  if (e.parallel.context > 1) j["parallel"]["context"] = e.parallel.context;
  if (e.parallel.pipeline > 1) j["parallel"]["pipeline"] = e.parallel.pipeline;
  if (e.parallel.virtual_stages > 1) j["parallel"]["virtual_stages"] = e.parallel.virtual_stages;
  j["remat"] = std::string(NameOf(e.remat));
  j["runtime"] = std::string(NameOf(e.runtime));
  j["host_ms"] = e.host_ms;
  j["kernels"] = e.kernels;
  j["global_batch"] = e.global_batch;
  j["samples_per_s"] = e.samples_per_s;
  j["model_flops_per_step"] = e.model_flops;
  j["mfu"] = e.mfu;
  j["peak_memory_bytes"] = e.memory.total();
  j["memory"] = {{"weights", e.memory.weights},
                 {"gradients", e.memory.gradients},
                 {"optimizer_state", e.memory.optimizer_state},
                 {"master_weights", e.memory.master_weights},
                 {"activations", e.memory.activations},
                 {"transients", e.memory.transients},
                 {"fixed", e.memory.fixed},
                 {"padding_waste", e.memory.padding_waste}};
  j["hbm_bytes"] = e.hbm_bytes;
  j["fits"] = e.fits;
  j["max_batch"] = e.max_batch;
  j["usd_per_hour"] = Opt(e.usd_per_hour);
  j["usd_per_million_samples"] = Opt(e.usd_per_million_samples);
  j["epoch_s"] = Opt(e.epoch_s);
  j["usd_per_epoch"] = Opt(e.usd_per_epoch);
  j["unknown_ops"] = e.unknown_ops;
  j["coverage"] = {
      {"costed_ops", e.costed_ops},
      {"uncosted_ops", e.unknown_ops},
      {"uncosted_matrix_ops", e.unknown_matrix_ops},
      {"uncosted_shape_ops", e.unknown_shape_ops},
      {"share", e.coverage()},
      {"warning", e.coverage_warning ? ordered_json(*e.coverage_warning) : ordered_json()}};
  const EstimateComponents& c = e.components;
  j["components"] = {{"matmul_flops", c.matmul_flops},
                     {"conv_flops", c.conv_flops},
                     {"depthwise_flops", c.depthwise_flops},
                     {"depthwise_bytes", c.depthwise_bytes},
                     {"vector_bytes", c.vector_bytes},
                     {"forward_kernels", c.forward_kernels},
                     {"backward_kernels", c.backward_kernels},
                     {"optimizer_bytes", c.optimizer_bytes},
                     {"parameter_tensors", c.parameter_tensors},
                     {"matrix_peak_flops", c.matrix_peak_flops},
                     {"bandwidth", c.bandwidth},
                     {"state_bytes", c.state_bytes},
                     {"saved_bytes", c.saved_bytes},
                     {"saved_matrix_bytes", c.saved_matrix_bytes},
                     {"largest_tensor_bytes", c.largest_tensor_bytes},
                     {"live_peak_bytes", c.live_peak_bytes}};
  ordered_json top = ordered_json::array();
  for (const NodeTime& t : e.top_nodes) {
    top.push_back({{"node", t.node_name},
                   {"op", t.op},
                   {"ms", t.ms},
                   {"bound", t.compute_bound ? "compute" : "memory"},
                   {"mxu_utilization", t.mxu_utilization}});
  }
  j["top_ops"] = top;
  if (e.serving) {
    const ServingEstimate& s = *e.serving;
    j["serving"] = {{"ttft_ms", s.ttft_ms},
                    {"tpot_ms", s.tpot_ms},
                    {"decode_step_ms", s.decode_step_ms},
                    {"decode_weights_ms", s.decode_weights_ms},
                    {"decode_kv_ms", s.decode_kv_ms},
                    {"decode_compute_ms", s.decode_compute_ms},
                    {"decode_tensor_parallel_ms", s.decode_tensor_ms},
                    {"decode_expert_parallel_ms", s.decode_expert_ms},
                    {"prefill_share", s.prefill_share},
                    {"mean_context", s.mean_context},
                    {"kv_cache_length", s.kv_cache_length},
                    {"prefill_tokens", s.prefill_tokens},
                    {"bucketed_prefill", s.bucketed_prefill},
                    {"output_tokens_per_s", s.output_tokens_per_s},
                    {"output_tokens_per_s_per_chip", s.output_tokens_per_s_per_chip},
                    {"usd_per_million_output_tokens", Opt(s.usd_per_million_output_tokens)},
                    {"kv_bytes_per_token", s.kv_bytes_per_token},
                    {"weight_bytes_per_chip", s.weight_bytes},
                    {"kv_cache_bytes_per_chip", s.kv_cache_bytes},
                    {"fits", s.fits},
                    {"max_concurrency", s.max_concurrency},
                    {"requests", s.requests},
                    {"waves", s.waves},
                    {"job_s", s.job_s}};
  }
  j["assumptions"] = e.assumptions;
  return j;
}

// The serving table: one row per target, then where a decode step's time goes.
std::string ServingText(const std::vector<Estimate>& es) {
  std::string out =
      "serving (continuous batching)\ntarget               chips  fits  max conc.   TTFT ms   "
      "TPOT ms   tok/s/chip   KV cache/chip   $/1M out tok\n";
  for (const Estimate& e : es) {
    if (!e.serving) continue;
    const ServingEstimate& s = *e.serving;
    char line[256];
    std::snprintf(line, sizeof line, "%-20s %5d  %-4s  %9lld  %8s  %8s  %11s  %14s  %13s\n",
                  e.target.c_str(), e.chips, s.fits ? "yes" : "NO",
                  static_cast<long long>(s.max_concurrency), FormatMs(s.ttft_ms).c_str(),
                  FormatMs(s.tpot_ms).c_str(),
                  FormatFixed(s.output_tokens_per_s_per_chip, 0).c_str(),
                  FormatBytes(s.kv_cache_bytes).c_str(),
                  s.usd_per_million_output_tokens
                      ? ("$" + FormatFixed(*s.usd_per_million_output_tokens, 2)).c_str()
                      : "-");
    out += line;
  }
  for (const Estimate& e : es) {
    if (!e.serving) continue;
    const ServingEstimate& s = *e.serving;
    out += "  " + e.target + ": a decode step takes " + FormatMs(s.decode_step_ms) +
           " ms: it reads the weights in " + FormatMs(s.decode_weights_ms) +
           " ms and the KV cache (" + FormatBytes(s.kv_bytes_per_token) + " per token, " +
           (s.kv_cache_length > 0
                ? "a static cache of " + std::to_string(s.kv_cache_length) + " tokens a slot"
                : "mean context " + FormatFixed(s.mean_context, 0)) +
           ") in " + FormatMs(s.decode_kv_ms) + " ms; its matmuls and attention take " +
           FormatMs(s.decode_compute_ms) +
           " ms (partly hidden by the reads), tensor-parallel all-reduces " +
           FormatMs(s.decode_tensor_ms) + " ms" +
           (s.decode_expert_ms > 0 ? ", expert all-to-alls " + FormatMs(s.decode_expert_ms) + " ms"
                                   : std::string()) +
           "; prefills take " + FormatFixed(s.prefill_share * 100, 0) + "% of the time\n";
    if (s.requests > 0) {
      out += "  " + e.target + ": an offline job of " + std::to_string(s.requests) +
             " requests runs in " + std::to_string(s.waves) + (s.waves == 1 ? " wave" : " waves") +
             " per replica (the last one what is left) and takes " + FormatFixed(s.job_s, 1) +
             " s: " + FormatFixed(s.output_tokens_per_s, 0) + " output tokens/s over the job\n";
    }
  }
  return out;
}

// What to do about a step that does not fit: a training state larger than a device is sharded
// (data parallelism keeps it whole on every device), activations are kept fewer (remat) or a
// smaller batch a device is taken.
std::string FitHint(const Estimate& e) {
  const Parallelism& p = e.parallel;
  const int devices = p.data * p.fsdp * p.tensor * p.expert * p.context * p.pipeline;
  const double state =
      e.memory.weights + e.memory.gradients + e.memory.optimizer_state + e.memory.master_weights;
  std::string out = "does not fit: ";
  if (state > e.hbm_bytes) {
    // How many times more the state must be split to sit in 80% of a device's HBM, a power of two
    // as slices come. The memory breakdown is per device, after whatever sharding the step has.
    int split = 1;
    while (split < (1 << 16) && state / split > 0.8 * e.hbm_bytes) split *= 2;
    const bool replicated = p.fsdp == 1 && p.tensor == 1 && p.context == 1 && p.expert == 1 &&
                            p.pipeline == 1 && e.slices == 1;
    out += "the weights, gradients and optimizer state alone (" + FormatBytes(state) +
           " a device) are more than its HBM: ";
    if (!replicated) {
      out += "shard them " + std::to_string(split) +
             " times more ways than this step does (more chips on its FSDP or tensor axes)";
    } else if (split <= devices) {
      out += "shard them over this slice (--parallel fsdp=" + std::to_string(devices) + ")";
    } else {
      out += "shard them over at least " + std::to_string(split) +
             " devices (--parallel fsdp=N on a slice that large)";
    }
  } else if (e.max_batch >= 1) {
    out += "a batch of " + std::to_string(e.max_batch) + " a device does (--batch " +
           std::to_string(e.max_batch) + "), or keep fewer activations (--remat layer or offload)";
  } else {
    out += "keep fewer activations (--remat layer or offload) or spread them over more chips";
  }
  return out + "; `tpu-doctor plan` chooses the slice, parallelism and remat";
}

// How each row's step runs (a GPU's default is eager PyTorch, a TPU's XLA), since the comparison
// depends on it: one line naming the execution model of each target, and the options that change
// a GPU's.
std::string RuntimesLine(const Report& r) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_runtime;  // in first-seen order
  for (const Estimate& e : r.estimates) {
    const std::string name(NameOf(e.runtime));
    auto it = std::find_if(by_runtime.begin(), by_runtime.end(),
                           [&](const auto& g) { return g.first == name; });
    if (it == by_runtime.end()) it = by_runtime.insert(by_runtime.end(), {name, {}});
    it->second.push_back(e.target);
  }
  if (by_runtime.size() == 1 && by_runtime.front().first == "xla") return "";
  std::vector<std::string> parts;
  for (const auto& [name, targets] : by_runtime)
    parts.push_back(name + " on " + Join(targets, ", "));
  return "runtimes: " + Join(parts, "; ") +
         " (--runtime compiled, --channels-last and --precision change how a GPU's step runs)\n";
}

}  // namespace

std::string RenderEstimateText(const Report& r) {
  const std::vector<Estimate>& es = r.estimates;
  std::string out =
      "tpu-doctor " + std::string(kToolVersion) + ": estimate " + r.model + ", " +
      (r.train ? "training, batch " + std::to_string(r.estimate_batch)
       : !r.estimates.empty() && r.estimates.front().serving
           ? std::string("serving (TTFT: one prompt's prefill at batch 1; ") +
                 (r.estimates.front().serving->bucketed_prefill
                      ? "prefills one at a time, padded to their bucket)"
                      : "a round's prefills batched)")
           : "inference, batch " + std::to_string(r.estimate_batch)) +
      (r.estimates.empty() || !r.estimates.front().serving ? " per device" : "") +
      (!r.estimates.empty() && r.estimates.front().micro_batches > 1
           ? " x " + std::to_string(r.estimates.front().micro_batches) + " micro-batches"
           : std::string()) +
      ", " + std::string(NameOf(r.precision)) +
      (r.train ? ", " + std::string(NameOf(r.optimizer)) : "") + "\n";
  for (const std::string& note : r.flag_notes) out += "note: " + note + "\n";
  out += "\n";
  if (!es.empty() && es.front().serving) {
    out += ServingText(es);
  } else {
    out +=
        "target               chips  fits  max batch   step ms   samples/s    MFU   memory/dev    "
        "$/1M samples\n";
    for (const Estimate& e : es) {
      const std::string& name = e.target;  // a slice as named (`v3-8`); its chips are a column
      char line[256];
      std::snprintf(
          line, sizeof line, "%-20s %5d  %-4s  %9lld  %8s  %10s  %4.0f%%  %11s  %14s\n",
          name.c_str(), e.chips, e.fits ? "yes" : "NO", static_cast<long long>(e.max_batch),
          FormatMs(e.step_ms).c_str(), FormatFixed(e.samples_per_s, 1).c_str(), e.mfu * 100,
          FormatBytes(e.memory.total()).c_str(),
          e.usd_per_million_samples ? ("$" + FormatFixed(*e.usd_per_million_samples, 2)).c_str()
                                    : "-");
      out += line;
    }
  }
  for (const Estimate& e : es) {
    if (e.coverage_warning) {  // the same graph for every target: say it once
      out += "\nwarning: " + *e.coverage_warning + "\n";
      break;
    }
  }
  for (const Estimate& e : es) {
    out += "\n" + e.target + ": where the time goes (top ops)\n";
    for (const NodeTime& t : e.top_nodes) {
      char line[512];
      std::snprintf(line, sizeof line, "  %8s ms  %-7s  %-14s %s%s\n", FormatMs(t.ms).c_str(),
                    t.compute_bound ? "compute" : "memory", t.op.c_str(), t.node_name.c_str(),
                    t.mxu_utilization < 0.999
                        ? (" (MXU " + FormatFixed(t.mxu_utilization * 100, 0) + "% used)").c_str()
                        : "");
      out += line;
    }
    out +=
        "  memory: weights " + FormatBytes(e.memory.weights) + ", gradients " +
        FormatBytes(e.memory.gradients) + ", optimizer " +
        FormatBytes(e.memory.optimizer_state + e.memory.master_weights) + ", activations " +
        FormatBytes(e.memory.activations) +
        (e.memory.padding_waste > 0 ? " (tile padding " + FormatBytes(e.memory.padding_waste) + ")"
                                    : "") +
        ", transients " + FormatBytes(e.memory.transients) + " of " + FormatBytes(e.hbm_bytes) +
        " HBM\n";
    if (!e.fits && !e.serving) out += "  " + FitHint(e) + "\n";
    if (e.parallel.fsdp > 1 || e.parallel.tensor > 1 || e.parallel.expert > 1 ||
        e.parallel.context > 1 || e.parallel.pipeline > 1 || e.micro_batches > 1 ||
        e.remat != Remat::kNone || e.slices > 1) {
      out +=
          "  step: " + ToString(e.parallel) + ", remat " + std::string(NameOf(e.remat)) +
          ", global batch " + std::to_string(e.global_batch) +
          (e.micro_batches > 1 ? " (" + std::to_string(e.micro_batches) + " micro-batches)"
                               : std::string()) +
          "; forward " + FormatMs(e.forward_ms) + " ms, backward " + FormatMs(e.backward_ms) +
          " ms, recompute " + FormatMs(e.recompute_ms) + " ms, optimizer " +
          FormatMs(e.optimizer_ms) + " ms, gradient all-reduce " + FormatMs(e.allreduce_ms) +
          " ms, FSDP collectives " + FormatMs(e.fsdp_ms) + " ms (overlapped), tensor-parallel " +
          FormatMs(e.tensor_ms) + " ms" +
          (e.parallel.expert > 1 ? ", expert all-to-alls " + FormatMs(e.expert_ms) + " ms" : "") +
          (e.parallel.context > 1 ? ", context key/value gathers " + FormatMs(e.context_ms) + " ms"
                                  : "") +
          (e.parallel.pipeline > 1 ? ", pipeline bubble " + FormatMs(e.pipeline_bubble_ms) +
                                         " ms, stage sends " + FormatMs(e.pipeline_send_ms) + " ms"
                                   : "") +
          (e.slices > 1 ? ", " + std::to_string(e.slices) + " slices: DCN all-reduce " +
                              FormatMs(e.dcn_ms) + " ms (overlapped)"
                        : "") +
          "\n";
    }
    for (const std::string& s : e.assumptions) out += "  assumes: " + s + "\n";
  }
  return out;
}

namespace {

std::string Dollars(double usd) {
  return "$" + FormatFixed(usd, usd < 10 ? 2 : (usd < 1000 ? 1 : 0));
}

std::string Ratio(double x) { return FormatFixed(x, x < 10 ? 1 : 0) + "x"; }

}  // namespace

std::string RenderEstimateCompare(const Report& r) {
  std::string out = "tpu-doctor " + std::string(kToolVersion) + ": cost of " +
                    (r.train ? "training " : "inference on ") + r.model + ", batch " +
                    std::to_string(r.estimate_batch) + " per device, " +
                    std::string(NameOf(r.precision)) + "\n\n";
  std::vector<const Estimate*> ranked, unranked;
  for (const Estimate& e : r.estimates)
    (e.fits && e.usd_per_million_samples ? ranked : unranked).push_back(&e);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Estimate* a, const Estimate* b) {
    return *a->usd_per_million_samples < *b->usd_per_million_samples;
  });
  const bool epochs = !ranked.empty() && ranked.front()->usd_per_epoch.has_value();
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %5s %11s %9s %13s %s\n", "target", "chips", "samples/s",
                "$/hour", "$/1M samples", epochs ? "   $/epoch  vs cheapest" : "  vs cheapest");
  out += line;
  for (const Estimate* e : ranked) {
    const double vs = *e->usd_per_million_samples / *ranked.front()->usd_per_million_samples;
    std::snprintf(line, sizeof line, "%-20s %5d %11s %9s %13s ", e->target.c_str(), e->chips,
                  FormatFixed(e->samples_per_s, 0).c_str(), Dollars(*e->usd_per_hour).c_str(),
                  Dollars(*e->usd_per_million_samples).c_str());
    out += line;
    if (epochs) {
      std::snprintf(line, sizeof line, "%10s  ",
                    e->usd_per_epoch ? Dollars(*e->usd_per_epoch).c_str() : "-");
      out += line;
    }
    out += (e == ranked.front() ? std::string("cheapest") : Ratio(vs) + " the cost") + "\n";
  }
  for (const Estimate* e : unranked) {
    out += e->target + ": " +
           (!e->fits ? "does not fit at this batch (" + FormatBytes(e->memory.total()) +
                           " per device; `tpu-doctor estimate` names the batch that fits)"
                     : "no list price known: pass --price " + e->hardware + "=USD_PER_CHIP_HOUR") +
           "\n";
  }
  if (ranked.size() >= 2) {
    const Estimate& best = *ranked.front();
    const Estimate& next = *ranked[1];
    out += "\ncheapest per 1M samples: " + best.target + " at " +
           Dollars(*best.usd_per_million_samples) + ", " +
           Ratio(*next.usd_per_million_samples / *best.usd_per_million_samples) + " cheaper than " +
           next.target + " (" + Dollars(*next.usd_per_million_samples) + ")";
    const Estimate* fastest = ranked.front();
    for (const Estimate* e : ranked) {
      if (e->samples_per_s > fastest->samples_per_s) fastest = e;
    }
    if (fastest != &best) {
      out += "; fastest: " + fastest->target + " (" + FormatFixed(fastest->samples_per_s, 0) +
             " samples/s, " + Ratio(fastest->samples_per_s / best.samples_per_s) +
             " the throughput for " +
             Ratio(*fastest->usd_per_million_samples / *best.usd_per_million_samples) +
             " the cost)";
    }
    out += "\n";
  } else if (ranked.size() == 1) {
    out += "\nonly " + ranked.front()->target +
           " has a price and fits: " + Dollars(*ranked.front()->usd_per_million_samples) +
           " per 1M samples\n";
  }
  out += RuntimesLine(r);
  out +=
      "prices: on-demand list prices per chip- or GPU-hour unless given with --price; "
      "`tpu-doctor targets --format json` gives each one's source and date, and whether a GPU's "
      "includes its host VM\n";
  return out;
}

std::string RenderEstimateJson(const Report& r) {
  ordered_json j;
  j["schema_version"] = 1;
  j["tool"] = {{"name", "tpu-doctor"}, {"version", kToolVersion}};
  j["model"] = {{"path", r.model}, {"format", r.format}, {"producer", r.producer}};
  j["mode"] = r.train ? "train" : "infer";
  j["precision"] = std::string(NameOf(r.precision));
  j["optimizer"] = r.train ? ordered_json(std::string(NameOf(r.optimizer))) : ordered_json();
  j["batch_per_device"] = r.estimate_batch;
  j["shape_notes"] = r.shape_notes;
  j["flag_notes"] = r.flag_notes;
  ordered_json arr = ordered_json::array();
  for (const Estimate& e : r.estimates) arr.push_back(EstimateJson(e));
  j["estimates"] = arr;
  return j.dump(2) + "\n";
}

}  // namespace tpudoctor

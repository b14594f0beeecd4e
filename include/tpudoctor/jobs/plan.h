// Plan: how to run a model's training on Cloud TPUs. For each TPU generation asked for, MakePlan
// searches slice size x per-device batch x parallelism (data, FSDP, FSDP x tensor) x activation
// rematerialisation for the configurations that fit by the estimate's own memory model, ranks them
// (cheapest per million samples, or fastest), and returns the best per generation, the overall
// choice and the runner-ups, each with its estimate. EmitJobFiles (emit.h) turns a choice into
// files that launch it.
//
// The search is exhaustive over a small grid: the catalog's slices up to `max_chips`, batches in
// powers of two, parallelism {data, fsdp=N, fsdp=N/t x tp=t for t in 2,4,8}, remat {none, layer,
// offload} (training). The global batch is capped (default: 4M tokens for sequence models whose
// config set a sequence length, else 4,096 samples) because a larger one changes the training, not
// just its speed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/jobs/catalog.h"

namespace tpudoctor {

enum class PlanObjective : std::uint8_t { kCost, kThroughput };

struct PlanOptions {
  std::vector<std::string> generations;  // targets ("tpu-v5e"); empty: v5e, v5p, v6e
  int max_chips = 256;
  std::optional<double> budget_usd_per_hour;  // slices above it are skipped
  PlanObjective objective = PlanObjective::kCost;
  std::optional<std::int64_t> global_batch;  // exactly this many samples per step
  std::optional<std::int64_t> max_global_batch;
  bool train = true;
  Optimizer optimizer = Optimizer::kAdam;
  Precision precision = Precision::kBf16;
  std::string input_format;  // "" detects it
  ShapeOptions shapes;       // --seq / --dim (the batch is searched)
  // The job (`--tokens`, or `--epochs` x `--dataset-size`): what the whole run processes. With
  // it the plan ranks slices by what the job costs, keeps only those that finish by the
  // deadline, prefers the smallest slice among near-equals and says why.
  std::optional<double> job_tokens;
  std::optional<double> job_samples;
  std::optional<double> deadline_hours;
  // A fine-tune keeps the global batch a fine-tune uses (at most 512Ki tokens or 256 samples per
  // step) instead of a pre-training one.
  bool fine_tune = false;
};

struct PlanCandidate {
  const TpuGeneration* generation = nullptr;
  const TpuSlice* slice = nullptr;
  std::string accelerator_type;     // `v5p-128`
  std::int64_t graph_batch = 0;     // samples each compute replica (chips / tp) processes
  Estimate estimate;                // parallel, remat, global batch, memory, time, cost
  int devices = 0;                  // what a framework sees: chips x devices per chip
  std::optional<double> job_hours;  // with a job: how long it runs on this configuration
  std::optional<double> job_usd;    // and what it costs (unknown without a price)
  double per_device_batch() const {
    return static_cast<double>(estimate.global_batch) / std::max(1, devices);
  }
};

struct Plan {
  std::string model;   // display name
  std::string format;  // of the model
  Framework framework = Framework::kUnknown;
  std::int64_t tokens_per_sample = 1;  // the sequence length of a config model, else 1
  std::int64_t max_global_batch = 0;   // the cap the search used
  std::vector<PlanCandidate> best;     // the best per generation, in the order asked
  std::vector<PlanCandidate> ranked;   // the best configuration of each slice, best first (8 kept)
  std::vector<std::string> unfit;      // generations with nothing that fits, and why
  std::vector<std::string> notes;      // load notes and assumptions
  // Errors `check` finds on the first generation besides memory (SHP001, TPU001, ...): the model
  // does not run on a TPU as it is, whatever the plan says about memory and time.
  std::vector<std::string> blockers;
  std::optional<double> job_samples;  // the job the plan was made for, in samples
  std::optional<double> deadline_hours;
  std::string why;  // one line on why the choice, against the alternatives (with a job: its cost)
  const PlanCandidate* choice() const { return ranked.empty() ? nullptr : &ranked.front(); }
};

Result<Plan> MakePlan(const Source& source, const PlanOptions& options);

// The plan for people (the choice, the best per generation, the runner-ups) and for scripts.
std::string RenderPlanText(const Plan& plan);
std::string RenderPlanJson(const Plan& plan);

}  // namespace tpudoctor

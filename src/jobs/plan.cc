#include "tpudoctor/jobs/plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "tpudoctor/check/check.h"
#include "tpudoctor/support/strings.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {
namespace {

constexpr std::int64_t kMaxTokensPerStep = std::int64_t{4} << 20;
constexpr std::int64_t kMaxSamplesPerStep = 4096;
// A fine-tune's global batch (a judgement: fine-tuning recipes run tens to a few hundred
// sequences per step; Hugging Face's and MaxText's SFT examples stay below half a million tokens).
constexpr std::int64_t kFineTuneTokensPerStep = std::int64_t{512} << 10;
constexpr std::int64_t kFineTuneSamplesPerStep = 256;
constexpr std::int64_t kMaxGraphBatch = 1024;

// The parallelism layouts the search tries on `devices` devices.
std::vector<Parallelism> Layouts(int devices) {
  std::vector<Parallelism> out = {{devices, 1, 1}};
  if (devices > 1) out.push_back({1, devices, 1});
  for (int tp : {2, 4, 8}) {
    if (devices % tp == 0 && devices / tp > 1) out.push_back({1, devices / tp, tp});
    if (devices == tp) out.push_back({1, 1, tp});
  }
  return out;
}

int RematRank(Remat r) { return static_cast<int>(r); }

// A deadline in hours as the user gave it: 48, 1.5, 0.25 (not "0" for a quarter of an hour).
std::string Hours(double h) { return FormatFixed(h, h >= 10 ? 0 : h >= 1 ? 1 : 2); }

// Sharding a configuration needs beyond data parallelism: none, FSDP, FSDP and tensor.
int ShardingRank(const Parallelism& p) { return (p.fsdp > 1 ? 1 : 0) + (p.tensor > 1 ? 2 : 0); }

// Under the cost objective, a target without a public price (TPU7x) is costed in chip-seconds,
// which any per-chip-hour price multiplies; it cannot be weighed against dollars.
bool Unpriced(const Estimate& e, PlanObjective objective) {
  return objective == PlanObjective::kCost && !e.usd_per_million_samples;
}

// How good a configuration is, smaller first: dollars per million samples (without a price,
// chip-seconds per million samples), or for the throughput objective seconds per million samples.
double Score(const Estimate& e, PlanObjective objective) {
  if (e.samples_per_s <= 0) return 1e300;
  if (objective == PlanObjective::kCost) {
    return e.usd_per_million_samples ? *e.usd_per_million_samples : e.chips * 1e6 / e.samples_per_s;
  }
  return 1e6 / e.samples_per_s;
}

// The candidates whose scores compare: under the cost objective, the priced ones when there are
// any (an unpriced generation keeps its own best, but is not chosen over a priced one).
std::vector<const PlanCandidate*> Comparable(std::vector<const PlanCandidate*> candidates,
                                             PlanObjective objective) {
  const bool any_priced = std::any_of(candidates.begin(), candidates.end(), [&](const auto* c) {
    return !Unpriced(c->estimate, objective);
  });
  if (any_priced) {
    std::erase_if(candidates, [&](const auto* c) { return Unpriced(c->estimate, objective); });
  }
  return candidates;
}

// How much a configuration asks of the user: sharding, remat, chips; for a job, the chips first
// (the smallest slice that does the job about as cheaply: fewer hosts to get and to fail).
std::tuple<int, int, int> Complexity(const Estimate& e, bool job) {
  if (job) return {e.chips, ShardingRank(e.parallel), RematRank(e.remat)};
  return {ShardingRank(e.parallel), RematRank(e.remat), e.chips};
}

// The choice among candidates: the simplest of those within 5% of the best score (plain data
// parallelism before FSDP before tensor parallelism, less remat, fewer chips): the estimate is not
// precise enough to prefer a more complex set-up for less.
const PlanCandidate* Choose(std::vector<const PlanCandidate*> candidates, PlanObjective objective,
                            bool job) {
  candidates = Comparable(std::move(candidates), objective);
  double best = 1e300;
  for (const PlanCandidate* c : candidates) best = std::min(best, Score(c->estimate, objective));
  const PlanCandidate* choice = nullptr;
  for (const PlanCandidate* c : candidates) {
    const Estimate& e = c->estimate;
    if (Score(e, objective) > best * 1.05) continue;
    if (choice == nullptr ||
        std::make_tuple(Complexity(e, job), Score(e, objective)) <
            std::make_tuple(Complexity(choice->estimate, job), Score(choice->estimate, objective)))
      choice = c;
  }
  return choice;
}

std::string JobCost(const PlanCandidate& c) {
  return Hours(*c.job_hours) + " h" +
         (c.job_usd ? " for $" + FormatFixed(*c.job_usd, 0) : std::string());
}

// Of the slices where no configuration finishes by the deadline, the configuration that comes
// closest (a slice with one configuration in time is not "too slow", whatever its others take).
// `late` holds each slice's fastest configuration past the deadline.
const PlanCandidate* FastestMissingTheDeadline(const std::map<const TpuSlice*, PlanCandidate>& late,
                                               const std::vector<PlanCandidate>& in_time) {
  const PlanCandidate* out = nullptr;
  for (const auto& [slice, c] : late) {
    const TpuSlice* s = slice;  // a structured binding is not capturable before C++20's P1091
    const bool slice_in_time =
        std::any_of(in_time.begin(), in_time.end(), [s](const auto& t) { return t.slice == s; });
    if (!slice_in_time && (!out || *c.job_hours < *out->job_hours)) out = &c;
  }
  return out;
}

// One line on why a job's choice: what it takes and costs, the cheapest configuration if it is
// another (and by how much), and the next smaller slice if the deadline ruled it out.
std::string WhyThisSlice(const Plan& plan, const PlanCandidate& choice,
                         const std::vector<const PlanCandidate*>& order,
                         const PlanCandidate* too_slow) {
  const double tokens = *plan.job_samples * static_cast<double>(plan.tokens_per_sample);
  std::string why = "the job (" +
                    (plan.tokens_per_sample > 1 ? FormatFixed(tokens / 1e9, 2) + "B tokens"
                                                : FormatFixed(*plan.job_samples, 0) + " samples") +
                    ") takes " + JobCost(choice) + " on " + choice.accelerator_type;
  if (plan.deadline_hours) why += ", within the " + Hours(*plan.deadline_hours) + " h deadline";
  const PlanCandidate* cheapest = nullptr;
  for (const PlanCandidate* c : order) {
    if (c->job_usd && (cheapest == nullptr || *c->job_usd < *cheapest->job_usd)) cheapest = c;
  }
  if (cheapest != nullptr && cheapest->accelerator_type != choice.accelerator_type &&
      cheapest->job_usd && choice.job_usd) {
    const double saving = 1 - *cheapest->job_usd / *choice.job_usd;
    why += "; " + cheapest->accelerator_type + " would take " + JobCost(*cheapest) +
           (saving > 0 ? " (" + FormatFixed(saving * 100, 0) + "% less: within 5%, the smaller " +
                             "slice is kept)"
                       : "");
  }
  if (too_slow && too_slow->estimate.chips < choice.estimate.chips)
    why += "; " + too_slow->accelerator_type + " would take " + JobCost(*too_slow) +
           ", past the deadline";
  return why;
}

// A duration in the unit that reads best: seconds, minutes or hours.
std::string Duration(double seconds) {
  if (seconds < 120) return FormatFixed(seconds, seconds < 10 ? 1 : 0) + " s";
  if (seconds < 7200) return FormatFixed(seconds / 60, 0) + " min";
  return FormatFixed(seconds / 3600, 1) + " h";
}

// Without a job: what the choice is best at, and what the next slices of the ranking cost or take
// against it, in the ranking's own units ($, chip-time where a price is unknown, or time per 1M
// tokens or samples).
std::string WhyBestScore(const Plan& plan, const PlanCandidate& choice, PlanObjective objective) {
  const bool tokens = plan.tokens_per_sample > 1;
  const double per = tokens ? static_cast<double>(plan.tokens_per_sample) : 1.0;
  const bool unpriced = Unpriced(choice.estimate, objective);
  const bool dollars = objective == PlanObjective::kCost && !unpriced;
  auto value = [&](const Estimate& e) { return Score(e, objective) / per; };
  auto show = [&](double v) {
    if (dollars) return "$" + FormatFixed(v, v < 0.1 ? 4 : 2);
    return unpriced ? Duration(v) + " of chip time" : Duration(v);
  };
  const std::string what = dollars ? "cost" : unpriced ? "chip time (no public price)" : "time";
  std::vector<const PlanCandidate*> peers;
  for (const PlanCandidate& r : plan.ranked) {
    if (Unpriced(r.estimate, objective) == unpriced) peers.push_back(&r);
  }
  const double mine = value(choice.estimate);
  // The lowest of the ranking, when it is not the choice (which is within 5% of it).
  const PlanCandidate* lower = nullptr;
  for (const PlanCandidate* r : peers) {
    if (value(r->estimate) < (lower ? value(lower->estimate) : mine)) lower = r;
  }
  const std::string unit = std::string(" per 1M ") + (tokens ? "tokens" : "samples");
  std::string why =
      lower == nullptr
          ? "the lowest " + what + unit + " of the slices that fit (" + show(mine) + ")"
          : show(mine) + unit + ", within 5% of the lowest (" + lower->accelerator_type + ", " +
                show(value(lower->estimate)) + "), with the simpler set-up";
  std::vector<std::string> next;
  for (const PlanCandidate* r : peers) {
    if (r == lower || (r->generation == choice.generation && r->slice == choice.slice)) continue;
    const double v = value(r->estimate);
    next.push_back(r->accelerator_type + " " + show(v) + " (" + (v >= mine ? "+" : "") +
                   FormatFixed((v / mine - 1) * 100, 0) + "%)");
    if (next.size() == 2) break;
  }
  if (!next.empty()) why += "; next: " + Join(next, ", ");
  return why;
}

struct LoadedBatch {
  std::int64_t batch = 0;
  LoadedModel model;
};

// The devices a framework sees on a slice (two per v2/v3/7x chip).
int SliceDevices(const TpuSlice& slice, const TargetSpec& target) {
  return slice.chips * std::max(1, target.devices_per_chip);
}

// The groups that each take their own share of the global batch: every device but a tensor-
// parallel group's, which shares one.
std::int64_t Replicas(int devices, const Parallelism& p) { return devices / p.tensor; }

// The batches a device takes that the search tries: powers of two up to kMaxGraphBatch, or, for an
// exact global batch, its share on each slice and layout that splits it evenly (a global batch of
// 96 is 24 a device on 4, 12 on 8, 6 on 16, 3 on 32, none of them a power of two).
std::vector<std::int64_t> DeviceBatches(const PlanOptions& options,
                                        const std::vector<const TpuGeneration*>& gens) {
  std::set<std::int64_t> out;
  if (!options.global_batch) {
    for (std::int64_t b = 1; b <= kMaxGraphBatch; b *= 2) out.insert(b);
  } else {
    for (const TpuGeneration* g : gens) {
      const TargetSpec& target = **FindTarget(g->target);
      for (const TpuSlice& slice : g->slices) {
        if (slice.chips > options.max_chips) continue;
        const int devices = SliceDevices(slice, target);
        for (const Parallelism& p : Layouts(devices)) {
          const std::int64_t replicas = Replicas(devices, p);
          if (*options.global_batch % replicas == 0 &&
              *options.global_batch / replicas <= kMaxGraphBatch)
            out.insert(*options.global_batch / replicas);
        }
      }
    }
  }
  // The first load also reads the model's format and notes: batch 1 when nothing else is asked.
  if (out.empty()) out.insert(1);
  return {out.begin(), out.end()};
}

// The model at each batch the search tries: a model whose batch is fixed (a compiled XLA program,
// a static ONNX batch) has one.
Result<std::vector<LoadedBatch>> LoadBatches(const Source& source, const PlanOptions& options,
                                             const std::vector<std::int64_t>& device_batches,
                                             Plan& plan) {
  std::vector<LoadedBatch> out;
  for (const std::int64_t b : device_batches) {
    ShapeOptions shapes = options.shapes;
    shapes.batch = b;
    auto m = LoadModelAs(source, shapes, options.input_format);
    if (!m) return m.error();
    const ModelFacts& facts = m->graph.facts();
    if (out.empty()) {
      plan.format = m->format;
      plan.framework = facts.framework;
      if (m->format.ends_with("-config")) {
        plan.tokens_per_sample = m->graph.value(m->graph.inputs()[0]).type.shape.dim(1).value();
      }
      for (const std::string& n : m->shape_notes) {
        // Notes about the batch describe the first load's batch, not the plan's batches.
        if (n.find("batch") == std::string::npos) plan.notes.push_back(n);
      }
    }
    if (facts.xla_program) {
      plan.notes.push_back(
          "an XLA program's shapes are fixed by the compiler: each replica runs the program as it "
          "is, so a \"sample\" below is one execution of it, with the batch it was compiled for");
      out.push_back({1, std::move(*m)});
      break;
    }
    const std::optional<std::int64_t> batch = facts.batch;
    if (!batch) {
      return MakeError(source.display_name +
                       ": the plan needs a model whose batch it can set (a static graph after "
                       "--batch; pass --dim for other symbolic dims)");
    }
    if (facts.batch_source != BatchSource::kFlag) {
      out.push_back({*batch, std::move(*m)});
      plan.notes.push_back("the model's batch is fixed at " + std::to_string(*batch) +
                           " per step; only slices and parallelism were searched");
      break;
    }
    out.push_back({b, std::move(*m)});
  }
  return out;
}

}  // namespace

Result<Plan> MakePlan(const Source& source, const PlanOptions& options) {
  Plan plan;
  plan.model = source.display_name;
  std::vector<const TpuGeneration*> gens;
  const std::vector<std::string> names =
      options.generations.empty() ? std::vector<std::string>{"tpu-v5e", "tpu-v5p", "tpu-v6e"}
                                  : options.generations;
  for (const std::string& n : names) {
    auto slice = FindSliceTarget(n);
    const TpuGeneration* g = slice ? FindGeneration(slice->target->name) : nullptr;
    if (g == nullptr) {
      return MakeError("plan: `" + n +
                       "` is not a TPU generation the job catalog knows (tpu-v2, tpu-v3, tpu-v4, "
                       "tpu-v5e, tpu-v5p, tpu-v6e)");
    }
    gens.push_back(g);
  }
  if (options.max_chips < 1) return MakeError("plan: --max-chips must be at least 1");
  if (auto refusal = TrainingPrecisionRefusal(options.precision); refusal && options.train)
    return MakeError("plan: " + *refusal);
  auto batches = LoadBatches(source, options, DeviceBatches(options, gens), plan);
  if (!batches) return batches.error();
  // A model that does not run on a TPU as it is gets planned, but the plan says so first.
  for (const Diagnostic& d :
       RunChecks(batches->front().model.graph, **FindTarget(gens.front()->target))) {
    const std::string line = d.code + ": " + d.message;
    if (d.severity == Severity::kError && d.code != "MEM001" &&
        std::find(plan.blockers.begin(), plan.blockers.end(), line) == plan.blockers.end())
      plan.blockers.push_back(line);
  }
  // An XLA program is the whole step already (a jitted training step holds its backward pass and
  // optimizer update): it is costed as it is, not as the forward pass of a training step.
  const bool train = options.train && !batches->front().model.graph.facts().xla_program;
  const std::int64_t tokens_cap = options.fine_tune ? kFineTuneTokensPerStep : kMaxTokensPerStep;
  const std::int64_t samples_cap = options.fine_tune ? kFineTuneSamplesPerStep : kMaxSamplesPerStep;
  plan.max_global_batch = options.max_global_batch.value_or(
      plan.tokens_per_sample > 1 ? std::max<std::int64_t>(1, tokens_cap / plan.tokens_per_sample)
                                 : samples_cap);
  if (options.job_samples) {
    plan.job_samples = options.job_samples;
  } else if (options.job_tokens) {
    plan.job_samples = *options.job_tokens / static_cast<double>(plan.tokens_per_sample);
  }
  plan.deadline_hours = options.deadline_hours;
  const bool job = plan.job_samples.has_value();
  // Each slice's fastest configuration past the deadline, for the explanation.
  std::map<const TpuSlice*, PlanCandidate> too_slow;
  const std::vector<Remat> remats =
      train ? std::vector<Remat>{Remat::kNone, Remat::kLayer, Remat::kOffload}
            : std::vector<Remat>{Remat::kNone};
  std::vector<PlanCandidate> all;
  EstimateCache cache;  // every candidate of a batch shares the graph's costs and fusion plan
  for (const TpuGeneration* g : gens) {
    const TargetSpec& target = **FindTarget(g->target);
    bool fits = false;
    int split_chips = 0;  // the largest slice a layout of which takes the exact global batch
    std::string why_not = "nothing fits in " + std::to_string(options.max_chips) + " chips";
    for (const TpuSlice& slice : g->slices) {
      if (slice.chips > options.max_chips) continue;
      if (options.budget_usd_per_hour && target.price_usd_per_chip_hour &&
          *target.price_usd_per_chip_hour * slice.chips > *options.budget_usd_per_hour) {
        why_not = "nothing fits within the $" + std::to_string(*options.budget_usd_per_hour) +
                  "/hour budget";
        continue;
      }
      // Parallel degrees count the devices a framework sees (two per v2/v3/7x chip).
      const int devices = SliceDevices(slice, target);
      for (const Parallelism& p : Layouts(devices)) {
        for (Remat remat : remats) {
          for (const LoadedBatch& lb : *batches) {
            const std::int64_t global = lb.batch * Replicas(devices, p);
            if (options.global_batch ? global != *options.global_batch
                                     : global > plan.max_global_batch)
              continue;
            split_chips = std::max(split_chips, slice.chips);
            EstimateOptions eo;
            eo.train = train;
            eo.optimizer = options.optimizer;
            eo.precision = options.precision;
            eo.batch = lb.batch;
            eo.chips = slice.chips;
            eo.parallel = p;
            eo.remat = remat;
            eo.cache = &cache;
            auto e = EstimateStep(lb.model.graph, target, eo);
            if (!e || !e->fits || e->samples_per_s <= 0) continue;
            PlanCandidate c{
                g,  &slice, g->AcceleratorType(slice.chips), lb.batch, std::move(*e), devices,
                {}, {}};
            c.estimate.target = c.accelerator_type;
            if (job) {
              c.job_hours = *plan.job_samples / c.estimate.samples_per_s / 3600;
              if (c.estimate.usd_per_hour) c.job_usd = *c.estimate.usd_per_hour * *c.job_hours;
              if (options.deadline_hours && *c.job_hours > *options.deadline_hours) {
                auto [it, added] = too_slow.try_emplace(&slice, c);
                if (!added && *c.job_hours < *it->second.job_hours) it->second = std::move(c);
                why_not = "nothing finishes within " + Hours(*options.deadline_hours) +
                          " hours in " + std::to_string(options.max_chips) + " chips";
                continue;
              }
            }
            fits = true;
            all.push_back(std::move(c));
          }
        }
      }
    }
    // An exact global batch limits the slices to those whose replicas split it: say which.
    if (!fits && options.global_batch && split_chips == 0) {
      why_not = "no slice of at most " + std::to_string(options.max_chips) +
                " chips splits a global batch of " + std::to_string(*options.global_batch) +
                " evenly over its data replicas, at most " + std::to_string(kMaxGraphBatch) +
                " a device";
    } else if (!fits && options.global_batch && split_chips < options.max_chips &&
               why_not.starts_with("nothing fits in")) {
      why_not = "nothing fits on the slices that split a global batch of " +
                std::to_string(*options.global_batch) + " evenly (" + std::to_string(split_chips) +
                " chips at most); a larger batch opens larger ones";
    }
    if (!fits) plan.unfit.push_back(g->target + ": " + why_not);
  }
  // The best per generation, in the order asked, and the overall choice first among the
  // runner-ups, which are ranked by score and are other slices, not the same slice with another
  // batch.
  const auto of = [&](const TpuGeneration* g) {
    std::vector<const PlanCandidate*> out;
    for (const PlanCandidate& c : all) {
      if (g == nullptr || c.generation == g) out.push_back(&c);
    }
    return out;
  };
  for (const TpuGeneration* g : gens) {
    const PlanCandidate* b = Choose(of(g), options.objective, job);
    if (b == nullptr) continue;
    plan.best.push_back(*b);
    if (Unpriced(b->estimate, options.objective) && gens.size() > 1) {
      plan.notes.push_back(g->target +
                           " has no public price: its slices are ranked by chip-hours per sample "
                           "and it is not weighed against the priced generations");
    }
  }
  const PlanCandidate* choice = Choose(of(nullptr), options.objective, job);
  std::vector<const PlanCandidate*> order = of(nullptr);
  std::stable_sort(order.begin(), order.end(), [&](const PlanCandidate* a, const PlanCandidate* b) {
    const auto key = [&](const Estimate& e) {
      return std::make_tuple(Unpriced(e, options.objective), Score(e, options.objective),
                             Complexity(e, job));
    };
    return key(a->estimate) < key(b->estimate);
  });
  if (choice != nullptr) order.insert(order.begin(), choice);
  for (const PlanCandidate* c : order) {
    const bool seen =
        std::any_of(plan.ranked.begin(), plan.ranked.end(), [&](const PlanCandidate& r) {
          return r.generation == c->generation && r.slice == c->slice;
        });
    if (!seen) plan.ranked.push_back(*c);
    if (plan.ranked.size() == 8) break;
  }
  if (job && choice != nullptr) {
    plan.why = WhyThisSlice(plan, *choice, order, FastestMissingTheDeadline(too_slow, all));
  } else if (choice != nullptr) {
    plan.why = WhyBestScore(plan, *choice, options.objective);
  }
  return plan;
}

}  // namespace tpudoctor

#include "tpudoctor/jobs/plan.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "tpudoctor/report/report.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

// A device's share of the global batch: whole when it is (8), else to one decimal (15.6: a global
// batch of 1,000 over 64 chips in groups of 8), two below one (0.25: a sample over 4 devices).
std::string DeviceBatch(double b) {
  if (b < 1) return FormatFixed(b, 2);
  return FormatFixed(b, std::floor(b) == b ? 0 : 1);
}

using nlohmann::ordered_json;

std::string Money(const std::optional<double>& usd) {
  if (!usd) return "-";
  return "$" + FormatFixed(*usd, *usd < 0.1 ? 4 : *usd < 10 ? 2 : (*usd < 1000 ? 1 : 0));
}

// Dollars per million samples, or per million tokens for sequence models.
std::optional<double> PerMillion(const Plan& plan, const Estimate& e) {
  if (!e.usd_per_million_samples) return std::nullopt;
  return *e.usd_per_million_samples / static_cast<double>(plan.tokens_per_sample);
}

// Samples per second, or tokens per second per chip for sequence models.
std::string Throughput(const Plan& plan, const Estimate& e) {
  if (plan.tokens_per_sample > 1) {
    return FormatFixed(e.samples_per_s * static_cast<double>(plan.tokens_per_sample) / e.chips, 0) +
           " tok/s/chip";
  }
  return FormatFixed(e.samples_per_s, 1) + " samples/s";
}

// With a job: how long it runs and what it costs on a configuration.
std::string JobColumns(const Plan& plan, const PlanCandidate& c) {
  if (!plan.job_samples || !c.job_hours) return "";
  char cell[64];
  std::snprintf(cell, sizeof cell, "  %8s h  %9s",
                FormatFixed(*c.job_hours, *c.job_hours < 1 ? 2 : 1).c_str(),
                Money(c.job_usd).c_str());
  return cell;
}

std::string Row(const Plan& plan, const PlanCandidate& c) {
  const Estimate& e = c.estimate;
  char line[512];
  std::snprintf(line, sizeof line,
                "%-15s %5d  %-22s %-8s %7s %7lld  %9s  %-20s %4.0f%%  %10s  %9s  %10s\n",
                c.accelerator_type.c_str(), e.chips, ToString(e.parallel).c_str(),
                std::string(NameOf(e.remat)).c_str(), DeviceBatch(c.per_device_batch()).c_str(),
                static_cast<long long>(e.global_batch), FormatMs(e.step_ms).c_str(),
                Throughput(plan, e).c_str(), e.mfu * 100, FormatBytes(e.memory.total()).c_str(),
                Money(e.usd_per_hour).c_str(), Money(PerMillion(plan, e)).c_str());
  std::string row = line;
  if (plan.job_samples) row.insert(row.size() - 1, JobColumns(plan, c));
  return row;
}

std::string Header(const Plan& plan) {
  return std::string(
             "slice           chips  parallelism            remat    batch/  global    step ms  "
             "throughput            MFU  memory/dev     $/hour  ") +
         (plan.tokens_per_sample > 1 ? "$/1M tok" : "$/1M samp") +
         (plan.job_samples ? "     job time   job cost" : "") +
         "\n                                                        dev\n";
}

ordered_json CandidateJson(const Plan& plan, const PlanCandidate& c) {
  const Estimate& e = c.estimate;
  ordered_json j;
  j["generation"] = c.generation->target;
  j["accelerator_type"] = c.accelerator_type;
  j["topology"] = c.slice->topology;
  j["chips"] = e.chips;
  j["hosts"] = c.generation->Hosts(e.chips);
  j["parallel"] = {
      {"data", e.parallel.data}, {"fsdp", e.parallel.fsdp}, {"tensor", e.parallel.tensor}};
  j["remat"] = std::string(NameOf(e.remat));
  j["per_device_batch"] = c.per_device_batch();
  j["global_batch"] = e.global_batch;
  j["step_time_ms"] = e.step_ms;
  j["samples_per_s"] = e.samples_per_s;
  j["tokens_per_s_per_chip"] =
      plan.tokens_per_sample > 1
          ? ordered_json(e.samples_per_s * static_cast<double>(plan.tokens_per_sample) / e.chips)
          : ordered_json();
  j["mfu"] = e.mfu;
  // A device is what the framework sees: a chip, or a TensorCore of a v2, v3 or TPU7x chip.
  const double devices_per_chip = static_cast<double>(c.devices) / std::max(1, e.chips);
  j["devices"] = c.devices;
  j["memory_per_device_bytes"] = e.memory.total();
  j["hbm_per_device_bytes"] = e.hbm_bytes;
  j["memory_per_chip_bytes"] = e.memory.total() * devices_per_chip;
  j["hbm_bytes"] = e.hbm_bytes * devices_per_chip;  // per chip, as `tpu-doctor targets` lists
  j["usd_per_hour"] = e.usd_per_hour ? ordered_json(*e.usd_per_hour) : ordered_json();
  j["usd_per_million_samples"] =
      e.usd_per_million_samples ? ordered_json(*e.usd_per_million_samples) : ordered_json();
  j["usd_per_million_tokens"] = plan.tokens_per_sample > 1 && e.usd_per_million_samples
                                    ? ordered_json(*PerMillion(plan, e))
                                    : ordered_json();
  if (plan.job_samples) {
    j["job_hours"] = c.job_hours ? ordered_json(*c.job_hours) : ordered_json();
    j["job_usd"] = c.job_usd ? ordered_json(*c.job_usd) : ordered_json();
  }
  return j;
}

}  // namespace

std::string RenderPlanText(const Plan& plan) {
  std::string out = "tpu-doctor " + std::string(kToolVersion) + ": plan " + plan.model + " (" +
                    plan.format +
                    (plan.tokens_per_sample > 1
                         ? ", " + std::to_string(plan.tokens_per_sample) + " tokens per sample"
                         : "") +
                    "), global batch at most " + std::to_string(plan.max_global_batch) + "\n";
  for (const std::string& n : plan.notes) out += "note: " + n + "\n";
  if (!plan.blockers.empty()) {
    out +=
        "\nwarning: the model does not run on a TPU as it is (`tpu-doctor check` says why); fix "
        "these first, the plan assumes they are fixed:\n";
    for (const std::string& b : plan.blockers) out += "  " + b + "\n";
  }
  const PlanCandidate* choice = plan.choice();
  if (choice == nullptr) {
    out += "\nno configuration fits:\n";
    for (const std::string& u : plan.unfit) out += "  " + u + "\n";
    return out;
  }
  const Estimate& e = choice->estimate;
  out += "\nchoice: " + choice->accelerator_type + " (" + choice->slice->topology + ", " +
         std::to_string(choice->generation->Hosts(e.chips)) + " host" +
         (choice->generation->Hosts(e.chips) == 1 ? "" : "s") + "), " + ToString(e.parallel) +
         ", remat " + std::string(NameOf(e.remat)) + ", " +
         DeviceBatch(choice->per_device_batch()) +
         (choice->devices == e.chips ? " per chip" : " per device") + ", global batch " +
         std::to_string(e.global_batch) + ": " + FormatMs(e.step_ms) + " ms per step, " +
         Throughput(plan, e) + ", " + Money(PerMillion(plan, e)) +
         (plan.tokens_per_sample > 1 ? " per 1M tokens\n" : " per 1M samples\n");
  if (!plan.why.empty()) out += "why: " + plan.why + "\n";
  out += "\nbest per generation\n" + Header(plan);
  for (const PlanCandidate& c : plan.best) out += Row(plan, c);
  for (const std::string& u : plan.unfit) out += "  " + u + "\n";
  out += "\nrunner-ups (best configuration of each slice)\n" + Header(plan);
  for (const PlanCandidate& c : plan.ranked) out += Row(plan, c);
  out +=
      "\n`tpu-doctor plan ... --emit DIR` writes the Vertex AI, gcloud, GKE and training-script "
      "files for the choice; `tpu-doctor estimate` shows its assumptions.\n";
  return out;
}

std::string RenderPlanJson(const Plan& plan) {
  ordered_json j;
  j["schema_version"] = 1;
  j["model"] = plan.model;
  j["format"] = plan.format;
  j["tokens_per_sample"] = plan.tokens_per_sample;
  j["max_global_batch"] = plan.max_global_batch;
  if (plan.job_samples) {
    j["job"] = {{"samples", *plan.job_samples},
                {"deadline_hours",
                 plan.deadline_hours ? ordered_json(*plan.deadline_hours) : ordered_json()},
                {"why", plan.why}};
  }
  j["choice"] = plan.choice() ? CandidateJson(plan, *plan.choice()) : ordered_json();
  j["why"] = plan.why;  // one line: why the choice, against the next slices (also job.why)
  ordered_json best = ordered_json::array();
  for (const PlanCandidate& c : plan.best) best.push_back(CandidateJson(plan, c));
  j["best_per_generation"] = best;
  ordered_json ranked = ordered_json::array();
  for (const PlanCandidate& c : plan.ranked) ranked.push_back(CandidateJson(plan, c));
  j["runner_ups"] = ranked;
  j["unfit"] = plan.unfit;
  j["notes"] = plan.notes;
  j["blockers"] = plan.blockers;
  return j.dump(2) + "\n";
}

}  // namespace tpudoctor

// Report: everything a renderer prints for `tpu-doctor check` and `estimate`, computed once by
// Analyze (tpudoctor/analyze.h). Renderers do no analysis; they only format a Report. The verdict
// is derived from the findings' severities: any error → blocked, else any warning → runs with
// warnings, else ready.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/diag/diagnostic.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/support/version.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {

inline constexpr int kReportSchemaVersion = 1;

enum class Verdict : std::uint8_t { kReady, kRunsWithWarnings, kBlocked };
std::string_view NameOf(Verdict verdict);  // "ready", "runs with warnings", "blocked"
// Blocked with an error, runs with warnings with a warning, else ready.
Verdict VerdictOf(int errors, int warnings);

struct OpSummaryRow {
  std::string op;  // qualified op type
  int count = 0;
  std::optional<Severity> worst;   // nullopt: no finding points at this op type
  std::vector<std::string> codes;  // sorted, unique
};

struct ValueSummary {
  std::string name;
  std::string type;  // "f32[batch,3,224,224]"
};

struct Report {
  std::string model;  // as given on the command line
  std::string format;
  // A Python script or notebook (script/script.h): findings only, no graph, target or estimate.
  bool script = false;
  std::string producer;
  std::string target;
  std::string target_display;
  // The slice the user named (`v6e-8`) when it has several chips: the rules judge one chip, and
  // MEM001 also the slice's chips sharing the state. Empty for a single chip.
  std::string slice;
  Verdict verdict = Verdict::kReady;
  int errors = 0;
  int warnings = 0;
  int notes = 0;
  int node_count = 0;  // including nodes of subgraphs
  std::vector<std::string> shape_notes;
  // Flags given that this input cannot honour (AnalyzeOptions::flag_notes; a script's --batch).
  std::vector<std::string> flag_notes;
  std::vector<ValueSummary> inputs;
  std::vector<ValueSummary> outputs;
  std::vector<OpSummaryRow> op_summary;  // flagged ops first, then by count, then by name
  std::vector<Diagnostic> findings;      // sorted (SortDiagnostics)

  ModelFacts facts;  // format, framework, batch as the loader decided them
  // What the estimates assume (the flags of check/estimate).
  bool train = false;
  Optimizer optimizer = Optimizer::kAdam;
  Precision precision = Precision::kBf16;
  // One step on `target` at the model's batch: what the memory and performance rules read.
  // Absent when the inputs are not static or shapes depend on data.
  std::optional<Estimate> estimate;
  // One estimate per requested target (AnalyzeOptions::estimate_targets), in request order, at
  // `estimate_batch` per device; empty with `estimate_unavailable` saying why when the model
  // cannot be estimated (a symbolic input dim, no batch).
  std::vector<Estimate> estimates;
  std::int64_t estimate_batch = 0;
  std::string estimate_unavailable;
};

// Verdicts of several reports (one `check` run over many models).
struct RunSummary {
  int models = 0;   // every report, scripts included
  int scripts = 0;  // of which Python scripts and notebooks
  int blocked = 0;
  int with_warnings = 0;
  int ready = 0;
};
RunSummary Summarize(std::span<const Report> reports);

Report BuildReport(const std::string& model_name, const LoadedModel& model,
                   const TargetSpec& target, std::vector<Diagnostic> findings);

}  // namespace tpudoctor

// Renderers: Report → text (for people) or JSON (for scripts, with `schema_version`; the schema is
// documented in docs/json-schema.md). Output is deterministic: sorted, fixed formatting, no
// timestamps or absolute paths, so golden tests compare it whole.
#pragma once

#include <span>
#include <string>

#include "tpudoctor/report/report.h"

namespace tpudoctor {

// How the text report looks: `color` adds ANSI colours to the verdict and severities (the CLI sets
// it only on a terminal and never with NO_COLOR).
struct TextStyle {
  bool color = false;
  bool ops = false;  // the table of ops by type (`check --ops`); otherwise one line counts them
};

// `tpu-doctor check`: verdict, findings, op summary.
std::string RenderText(const Report& report, const TextStyle& style = {});
std::string RenderJson(const Report& report);

// SARIF 2.1.0 for code scanning (GitHub): stable rule ids with their docs as help, a level per
// result, the model file (relative to the repository root) with a region, the node path as a
// logical location, and a fingerprint from the rule and node path.
std::string RenderSarif(const Report& report);

// One self-contained HTML page (inline CSS and SVG, no script, no network): verdict, findings, op
// summary, memory breakdown, where the time goes, and the per-target comparison when the report
// holds estimates. `standalone` false gives a fragment for embedding (notebooks).
std::string RenderHtml(const Report& report, bool standalone = true);

// Several models in one run (`tpu-doctor check a.onnx b.pt2 models/`): every report, then a
// summary line naming the blocked ones (text), a `reports` array with a `summary` (JSON), one
// SARIF run with every file as an artifact, one HTML page. With one report each gives exactly what
// the single-report function gives.
std::string SummaryLine(const RunSummary& summary);  // "checked 3 models: 1 blocked, ..."
// "blocked: a.onnx, b.pt2" (the first 20, then how many more); empty when none is blocked.
std::string BlockedLine(std::span<const Report> reports);
// One line per finding, as linters print them (`--format concise`):
// `path:where: severity[CODE] message`, where is a script's line:column (a notebook's
// `cell N:line:column`) or a model's node path; then the summary line.
std::string RenderConcise(std::span<const Report> reports);
// Findings counted per rule (`--statistics`): count, code, worst severity, the rule's name,
// most frequent first; then the summary line.
std::string RenderStatistics(std::span<const Report> reports);
std::string RenderTextAll(std::span<const Report> reports, const TextStyle& style = {});
std::string RenderJsonAll(std::span<const Report> reports);
std::string RenderSarifAll(std::span<const Report> reports);
std::string RenderHtmlAll(std::span<const Report> reports);

// `tpu-doctor estimate`: the table of report.estimates and where the time goes on each target.
std::string RenderEstimateText(const Report& report);
std::string RenderEstimateJson(const Report& report);
// One screen for the money question: the targets ranked by dollars per million samples (and per
// epoch with a dataset size), each against the cheapest, and a one-line answer. Unpriced targets
// and ones the model does not fit are listed after, saying why.
std::string RenderEstimateCompare(const Report& report);

// `tpu-doctor targets`: the hardware table.
std::string RenderTargetsText();
std::string RenderTargetsJson();

}  // namespace tpudoctor

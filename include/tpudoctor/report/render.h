// Renderers: Report → text (for people) or JSON (for scripts, with `schema_version`; the schema is
// documented in docs/json-schema.md). Output is deterministic: sorted, fixed formatting, no
// timestamps or absolute paths, so golden tests compare it whole.
#pragma once

#include <string>

#include "tpudoctor/report/report.h"

namespace tpudoctor {

// `tpu-doctor check`: verdict, findings, op summary.
std::string RenderText(const Report& report);
std::string RenderJson(const Report& report);

// SARIF 2.1.0 for code scanning (GitHub): stable rule ids with their docs as help, a level per
// result, the model file (relative to the repository root) with a region, the node path as a
// logical location, and a fingerprint from the rule and node path.
std::string RenderSarif(const Report& report);

// One self-contained HTML page (inline CSS and SVG, no script, no network): verdict, findings, op
// summary, memory breakdown, where the time goes, and the per-target comparison when the report
// holds estimates. `standalone` false gives a fragment for embedding (notebooks).
std::string RenderHtml(const Report& report, bool standalone = true);

// `tpu-doctor estimate`: the table of report.estimates and where the time goes on each target.
std::string RenderEstimateText(const Report& report);
std::string RenderEstimateJson(const Report& report);

// `tpu-doctor targets`: the hardware table.
std::string RenderTargetsText();
std::string RenderTargetsJson();

}  // namespace tpudoctor

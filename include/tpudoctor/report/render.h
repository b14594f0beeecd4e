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

// `tpu-doctor estimate`: the table of report.estimates and where the time goes on each target.
std::string RenderEstimateText(const Report& report);
std::string RenderEstimateJson(const Report& report);

// `tpu-doctor targets`: the hardware table.
std::string RenderTargetsText();
std::string RenderTargetsJson();

}  // namespace tpudoctor

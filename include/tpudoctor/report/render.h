// Renderers: Report → text (for people) or JSON (for scripts, with `schema_version`; the schema is
// documented in docs/json-schema.md). Output is deterministic: sorted, fixed formatting, no
// timestamps or absolute paths, so golden tests compare it whole.
#pragma once

#include <string>

#include "tpudoctor/report/report.h"

namespace tpudoctor {

std::string RenderText(const Report& report);
std::string RenderJson(const Report& report);

}  // namespace tpudoctor

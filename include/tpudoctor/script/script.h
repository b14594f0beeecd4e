// Python training scripts and notebooks: `tpu-doctor check train.py` (or `.ipynb`, or a folder).
// The script is parsed with tree-sitter's Python grammar (never matched as text); rules in
// src/script/rules/ read what it imports, calls and passes, and report findings located at the
// call (file, notebook cell, line, column), with fixes that `--fix` applies.
//
//   auto source = ReadSource("train.py");
//   Result<Report> report = CheckScript(*source, options);   // findings in report->findings
//   Result<FixOutcome> fixed = FixScript(*source, options, /*unsafe=*/false);
//
// Where to start: src/script/script_model.h (what rules can ask of the code), src/script/rule.h
// (how a rule reports), src/script/registry.cc (the rules).
#pragma once

#include <string>
#include <string_view>

#include "tpudoctor/check/check.h"
#include "tpudoctor/frontend/source.h"
#include "tpudoctor/report/report.h"
#include "tpudoctor/support/result.h"

namespace tpudoctor {

// Whether a path names a Python source: `.py`, `.pyw` or `.ipynb`.
bool IsScriptPath(std::string_view path);

// Checks a script or notebook with the selected rules. The Report's format is "python" or
// "notebook"; it has findings and no graph or estimate. Errors (one line): bytes that are not
// UTF-8 text, a file too large to be a script, a notebook that is not nbformat JSON, code nested
// deeper than Python accepts. `free_model`: false leaves the parsed tree and model allocated, for
// a command-line run that exits next (AnalyzeOptions::free_model).
Result<Report> CheckScript(const Source& source, const CheckOptions& options,
                           bool free_model = true);

struct FixOutcome {
  std::string bytes;    // the fixed file (the input's bytes when nothing applied)
  int applied = 0;      // fixes applied
  int unsafe_left = 0;  // unsafe fixes not applied (without `unsafe`)
  Report after;         // the fixed file checked again
};

// Applies the fixes of the selected rules: safe ones, and unsafe ones (they change numerics:
// float64 → float32) when `unsafe`. Overlapping edits wait for the next pass; passes repeat until
// nothing applies, so fixing the result again changes nothing. A notebook keeps its outputs and
// metadata; only the code cells' sources change. Nothing is written: the caller writes `bytes`.
Result<FixOutcome> FixScript(const Source& source, const CheckOptions& options, bool unsafe);

// A unified diff (`--- a/NAME`, `+++ b/NAME`, three lines of context) from `before` to `after`,
// or "" when they are equal.
std::string UnifiedDiff(std::string_view name, std::string_view before, std::string_view after);

}  // namespace tpudoctor

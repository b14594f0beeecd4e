#include <algorithm>

#include "tpudoctor/report/render.h"
#include "tpudoctor/rules/rules.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

std::string Pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string PadLeft(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// `file:line`, with the column and a notebook's cell when known: `nb.ipynb:cell 3:2:5`.
std::string FileLine(const Location& loc) {
  std::string out = loc.file;
  if (loc.cell > 0) out += ":cell " + std::to_string(loc.cell);
  if (loc.line > 0) out += ":" + std::to_string(loc.line);
  if (loc.line > 0 && loc.column > 0) out += ":" + std::to_string(loc.column);
  return out;
}

std::string Where(const Location& loc) {
  std::vector<std::string> parts;
  if (!loc.node.empty())
    parts.push_back("node `" + loc.node + "`" + (loc.op.empty() ? "" : " (" + loc.op + ")"));
  if (!loc.value.empty()) parts.push_back("value `" + loc.value + "`");
  if (!loc.scope.empty()) parts.push_back("layer `" + loc.scope + "`");
  if (!loc.file.empty()) parts.push_back(FileLine(loc));
  if (parts.empty()) return loc.graph;
  return (loc.graph.empty() ? "" : loc.graph + ": ") + Join(parts, ", ");
}

// ANSI SGR codes, used only when the caller asked for colour (a terminal, NO_COLOR unset).
struct Paint {
  bool on = false;
  std::string operator()(std::string_view sgr, const std::string& text) const {
    return on ? "\x1b[" + std::string(sgr) + "m" + text + "\x1b[0m" : text;
  }
};

std::string_view SgrOf(Severity s) {
  switch (s) {
    case Severity::kError:
      return "1;31";
    case Severity::kWarning:
      return "1;33";
    case Severity::kNote:
      return "1;36";
  }
  return "0";
}

std::string_view SgrOf(Verdict v) {
  switch (v) {
    case Verdict::kBlocked:
      return "1;31";
    case Verdict::kRunsWithWarnings:
      return "1;33";
    case Verdict::kReady:
      return "1;32";
  }
  return "0";
}

std::string Counts(const Report& r) {
  return Plural(r.errors, "error", "errors") + ", " + Plural(r.warnings, "warning", "warnings") +
         ", " + Plural(r.notes, "note", "notes");
}

// Inputs or outputs, one per line; beyond a screenful (an XLA training step takes every parameter
// and optimizer slot as an input) the first few and a count. JSON keeps them all.
constexpr std::size_t kMaxListedValues = 16;
constexpr std::size_t kListedWhenCut = 10;

void Values(std::string& out, const char* label, const std::vector<ValueSummary>& values) {
  if (values.empty()) return;
  const std::size_t shown = values.size() > kMaxListedValues ? kListedWhenCut : values.size();
  std::size_t width = 0;
  for (std::size_t i = 0; i < shown; ++i) width = std::max(width, values[i].name.size());
  const std::string indent(std::string(label).size() + 1, ' ');
  out += label;
  for (std::size_t i = 0; i < shown; ++i) {
    out += (i == 0 ? " " : indent) + Pad(values[i].name, width) + "  " + values[i].type + "\n";
  }
  if (shown < values.size()) {
    out += indent + "... and " + std::to_string(values.size() - shown) +
           " more (--format json lists all " + std::to_string(values.size()) + ")\n";
  }
}

// The ops of the model by type, with the worst finding on each: after the findings, which come
// first (a 50-row table above them hides what matters).
std::string OpTable(const Report& r) {
  std::string out;
  std::size_t op_width = 2;
  for (const auto& row : r.op_summary) op_width = std::max(op_width, row.op.size());
  out += "ops (" + Plural(r.node_count, "node", "nodes") + ", " +
         Plural(static_cast<std::int64_t>(r.op_summary.size()), "type", "types") + "):\n";
  out += "  " + Pad("op", op_width) + "  count  status\n";
  for (const auto& row : r.op_summary) {
    std::string status =
        row.worst ? std::string(NameOf(*row.worst)) + " " + Join(row.codes, ",") : "ok";
    out += "  " + Pad(row.op, op_width) + "  " + PadLeft(std::to_string(row.count), 5) + "  " +
           status + "\n";
  }
  return out;
}

// Without --ops: one line that counts them.
std::string OpCount(const Report& r) {
  return "ops: " + Plural(r.node_count, "node", "nodes") + " of " +
         Plural(static_cast<std::int64_t>(r.op_summary.size()), "type", "types") +
         " (--ops lists them)\n";
}

// A script's report: the findings in file order, located at the code.
std::string RenderScriptText(const Report& r, const Paint& paint) {
  std::string out = "tpu-doctor " + std::string(kToolVersion) + ": " + r.model + " (" + r.format +
                    (r.format == "python" ? " script" : "") + ")\n\n";
  out += "verdict: " + paint(SgrOf(r.verdict), AsciiUpper(NameOf(r.verdict))) + " (" + Counts(r) +
         ")\n";
  for (const std::string& note : r.flag_notes) out += "note:    " + note + "\n";
  if (!r.findings.empty()) out += "\nfindings:\n";
  for (const Diagnostic& d : r.findings) {
    out += FileLine(d.location) + ": " +
           paint(SgrOf(d.severity), std::string(NameOf(d.severity)) + "[" + d.code + "]") + ": " +
           d.message + "\n";
    for (const std::string& note : d.notes) out += "  = note: " + note + "\n";
    if (d.fix)
      out += "  = fix (" + std::string(NameOf(d.fix->applicability)) + "): " + d.fix->description +
             "\n";
  }
  out += "\nverdict: " + paint(SgrOf(r.verdict), std::string(NameOf(r.verdict))) + " on a TPU\n";
  return out;
}

// What ends a multi-report text: the summary line, then the blocked models.
std::string Footer(std::span<const Report> reports) {
  return SummaryLine(Summarize(reports)) + "\n" + BlockedLine(reports);
}

}  // namespace

std::string RenderText(const Report& r, const TextStyle& style) {
  const Paint paint{style.color};
  if (r.script) return RenderScriptText(r, paint);
  std::string out;
  out += "tpu-doctor " + std::string(kToolVersion) + ": " + r.model + " (" + r.format +
         (r.producer.empty() ? "" : ", " + r.producer) + ") on " + r.target_display + " (" +
         r.target + (r.slice.empty() ? "" : ", one chip of " + r.slice) + ")\n\n";
  const std::string verdict = AsciiUpper(NameOf(r.verdict));
  out += "verdict: " + paint(SgrOf(r.verdict), verdict) + " (" + Counts(r) + ")\n\n";
  Values(out, "inputs: ", r.inputs);
  Values(out, "outputs:", r.outputs);
  for (const std::string& note : r.shape_notes) out += "shapes:  " + note + "\n";
  for (const std::string& note : r.flag_notes) out += "note:    " + note + "\n";

  if (!r.findings.empty()) out += "\nfindings:\n";
  for (const Diagnostic& d : r.findings) {
    out += paint(SgrOf(d.severity), std::string(NameOf(d.severity)) + "[" + d.code + "]") + ": " +
           d.message + "\n";
    const std::string where = Where(d.location);
    if (!where.empty()) out += "  --> " + where + "\n";
    for (const std::string& note : d.notes) out += "  = note: " + note + "\n";
    if (d.fix)
      out += "  = fix (" + std::string(NameOf(d.fix->applicability)) + "): " + d.fix->description +
             "\n";
  }
  out += "\n" + (style.ops ? OpTable(r) : OpCount(r));
  out += "\nverdict: " + paint(SgrOf(r.verdict), std::string(NameOf(r.verdict))) + " on " +
         (r.slice.empty() ? r.target : r.slice) + "\n";
  return out;
}

std::string RenderTextAll(std::span<const Report> reports, const TextStyle& style) {
  if (reports.size() == 1) return RenderText(reports.front(), style);
  std::string out;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (i > 0) out += "\n" + std::string(100, '-') + "\n\n";
    out += RenderText(reports[i], style);
  }
  out += "\n" + Footer(reports);
  return out;
}

std::string BlockedLine(std::span<const Report> reports) {
  constexpr std::size_t kMaxNamed = 20;
  std::vector<std::string> blocked;
  for (const Report& r : reports) {
    if (r.verdict == Verdict::kBlocked) blocked.push_back(r.model.empty() ? "(example)" : r.model);
  }
  if (blocked.empty()) return "";
  const std::size_t more = blocked.size() > kMaxNamed ? blocked.size() - kMaxNamed : 0;
  blocked.resize(std::min(blocked.size(), kMaxNamed));
  return "blocked: " + Join(blocked, ", ") +
         (more > 0 ? ", and " + std::to_string(more) + " more" : "") + "\n";
}

std::string RenderConcise(std::span<const Report> reports) {
  std::string out;
  for (const Report& r : reports) {
    for (const Diagnostic& d : r.findings) {
      std::string where;
      if (r.script) {
        Location at = d.location;
        at.file.clear();
        where = FileLine(at);  // ":cell 3:2:5" or ":12:5"
      } else {
        // The node (or value) the finding is about; the graph only when neither is known.
        const std::string logical = !d.location.node.empty()    ? d.location.node
                                    : !d.location.value.empty() ? d.location.value
                                                                : d.location.graph;
        if (!logical.empty()) where = ":" + logical;
      }
      out += (r.model.empty() ? "(example)" : r.model) + where + ": " +
             std::string(NameOf(d.severity)) + "[" + d.code + "] " + d.message + "\n";
    }
  }
  out += Footer(reports);
  return out;
}

std::string RenderStatistics(std::span<const Report> reports) {
  struct Row {
    std::string code;
    int count = 0;
    Severity worst = Severity::kNote;
  };
  std::vector<Row> rows;
  for (const Report& r : reports) {
    for (const Diagnostic& d : r.findings) {
      auto it =
          std::find_if(rows.begin(), rows.end(), [&](const Row& x) { return x.code == d.code; });
      if (it == rows.end()) {
        rows.push_back({d.code, 0, d.severity});
        it = rows.end() - 1;
      }
      ++it->count;
      it->worst = std::max(it->worst, d.severity);
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.count != b.count ? a.count > b.count : a.code < b.code;
  });
  std::string out;
  for (const Row& row : rows) {
    const RuleInfo* info = FindRule(row.code);
    out += PadLeft(std::to_string(row.count), 6) + "  " + Pad(row.code, 8) + " " +
           Pad(std::string(NameOf(row.worst)), 8) + " " + (info ? info->name : "") + "\n";
  }
  out += Footer(reports);
  return out;
}

std::string SummaryLine(const RunSummary& s) {
  const int models = s.models - s.scripts;
  std::string what = Plural(models, "model", "models");
  if (s.scripts > 0) {
    const std::string scripts = Plural(s.scripts, "script", "scripts");
    what = models > 0 ? what + " and " + scripts : scripts;
  }
  return "checked " + what + ": " + std::to_string(s.blocked) + " blocked, " +
         std::to_string(s.with_warnings) + " runs with warnings, " + std::to_string(s.ready) +
         " ready";
}

}  // namespace tpudoctor

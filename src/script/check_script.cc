// CheckScript and FixScript (tpudoctor/script/script.h): read, parse, run the rules, and apply
// their fixes.
#include <algorithm>
#include <dtl/dtl.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "src/script/rule.h"
#include "src/script/script_text.h"
#include "src/script/vertex_jobs.h"
#include "src/support/two_threads.h"
#include "tpudoctor/script/script.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

using script::ScriptText;

// The most passes FixScript makes: each applies every fix that does not overlap an earlier one,
// and real files need one or two.
constexpr int kMaxFixPasses = 8;

// The first child of an ERROR root that is not a whole statement (a token or expression left
// over where parsing broke); the root itself when there is none.
script::Node FirstLooseChild(script::Node root) {
  for (std::uint32_t i = 0; i < root.count(); ++i) {
    script::Node child = root.child(i);
    const std::string_view type = child.type();
    if (!child.is_named() ||
        !(type.ends_with("_statement") || type.ends_with("_definition") || type == "comment")) {
      return child;
    }
  }
  return root;
}

// A note for code the parser could not read: findings cover the rest.
void NoteBrokenCode(const script::ScriptModel& model, const std::string& file,
                    DiagnosticSink& sink) {
  if (!model.syntax().has_error()) return;
  int broken = 0;
  script::Node first;
  script::Walk(model.syntax(), [&](script::Node n, int depth) {
    // tree-sitter may make the whole tree an ERROR around sound statements: look inside it.
    if (depth == 0 || !n.broken()) return true;
    if (broken++ == 0) first = n;
    return false;
  });
  if (broken == 0) {  // only a tree's root is marked: the break is its first loose token
    for (script::Node root : model.syntax().roots()) {
      if (root.broken()) {
        first = FirstLooseChild(root);
        broken = 1;
        break;
      }
    }
    if (broken == 0) return;
  }
  Diagnostic d;
  d.code = "LOAD001";
  d.severity = Severity::kNote;
  // Not "Python cannot parse": the grammar (tree-sitter-python 0.23) may not know syntax a newer
  // Python accepts (0.20 could not read a trailing comma in a subscript, `-> Tuple[int, int,]`).
  d.message = "tpu-doctor's Python parser cannot read " + Plural(broken, "part", "parts") +
              " of the code (the first here: a syntax error, or syntax newer than its "
              "tree-sitter-python 0.23 grammar): the findings cover the rest";
  const script::Position p = model.Locate(first);
  d.location.file = file;
  d.location.line = p.line;
  d.location.column = p.column;
  d.location.cell = p.cell;
  sink.Add(std::move(d));
}

// In the order of the file, as a linter lists them (findings at one place keep their order). The
// order is found on indices: a Diagnostic is large to move around.
std::vector<Diagnostic> InFileOrder(std::vector<Diagnostic> findings) {
  std::vector<std::size_t> order(findings.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Location& x = findings[a].location;
    const Location& y = findings[b].location;
    return std::tie(x.cell, x.line, x.column) < std::tie(y.cell, y.line, y.column);
  });
  std::vector<Diagnostic> out;
  out.reserve(findings.size());
  for (std::size_t i : order) out.push_back(std::move(findings[i]));
  return out;
}

// The rules only read the model, so two threads take them in turn. Each rule reports to its own
// sink and the sinks are joined in registry order: the findings are those of running the rules
// one after another.
void RunRules(const script::ScriptContext& context, const CheckOptions& options) {
  const auto& rules = script::AllScriptRules();
  std::vector<DiagnosticSink> sinks(rules.size());
  RunOnTwoThreads(rules.size(), [&](std::size_t i) {
    if (RuleSelected(rules[i]->code(), options)) {
      rules[i]->Run(script::ScriptContext(context, sinks[i]));
    }
  });
  for (DiagnosticSink& sink : sinks) {
    for (Diagnostic& d : sink.Take()) context.Add(std::move(d));
  }
}

struct Checked {
  ScriptText text;
  Report report;
};

// The tree and the model of a script, which the rules read.
struct Parsed {
  explicit Parsed(const ScriptText& text) : model(text) {}
  script::ScriptModel model;
  script::Syntax syntax;
};

// `free_model`: false leaves the tree and model allocated, for a command-line run that exits next
// (as AnalyzeOptions::free_model: freeing a large script's model call by call is a tenth of the
// rules' time).
Result<Checked> CheckParsed(const Source& source, const CheckOptions& options,
                            bool free_model = true) {
  auto text = script::ReadScript(source);
  if (!text) return text.error();
  auto parsed = std::make_unique<Parsed>(*text);
  script::ScriptModel& model = parsed->model;
  // The model is built from each part of a large file while the later parts are parsed.
  auto syntax = script::Syntax::Parse(text->code, 0, &model);
  if (!syntax) return MakeError(source.display_name + ": " + syntax.error().message);
  parsed->syntax = std::move(*syntax);
  model.Finish(parsed->syntax);
  if (!model.nesting_error().empty()) {
    return MakeError(source.display_name + ": " + model.nesting_error());
  }
  DiagnosticSink sink;
  RunRules(script::ScriptContext(model, source.display_name, sink), options);
  for (Diagnostic& d : script::CheckVertexJobs(model, source.display_name)) {
    if (RuleSelected(d.code, options)) sink.Add(std::move(d));
  }
  if (RuleSelected("LOAD001", options)) NoteBrokenCode(model, source.display_name, sink);
  Report r;
  r.model = source.display_name;
  r.format = text->notebook ? "notebook" : "python";
  r.script = true;
  r.findings = InFileOrder(sink.Take());
  for (const Diagnostic& d : r.findings) {
    r.errors += d.severity == Severity::kError;
    r.warnings += d.severity == Severity::kWarning;
    r.notes += d.severity == Severity::kNote;
  }
  r.verdict = VerdictOf(r.errors, r.warnings);
  r.train = options.train;
  if (!free_model) (void)parsed.release();
  return Checked{std::move(*text), std::move(r)};
}

// The edits of the fixes to apply this pass: whole fixes, in file order, none overlapping another.
std::vector<TextEdit> EditsToApply(const Report& report, std::string_view code, bool unsafe,
                                   int& fixes) {
  std::vector<const Fix*> chosen;
  for (const Diagnostic& d : report.findings) {
    if (!d.fix || d.fix->edits.empty()) continue;
    // A fix whose edits leave the text as it is would be applied on every pass.
    const bool changes =
        std::any_of(d.fix->edits.begin(), d.fix->edits.end(), [&](const TextEdit& e) {
          return e.end > code.size() || e.begin > e.end ||
                 code.substr(e.begin, e.end - e.begin) != e.replacement;
        });
    if (!changes) continue;
    if (d.fix->applicability == FixApplicability::kSafe ||
        (unsafe && d.fix->applicability == FixApplicability::kUnsafe)) {
      chosen.push_back(&*d.fix);
    }
  }
  std::vector<TextEdit> edits;
  for (const Fix* fix : chosen) {
    const bool overlaps = std::any_of(fix->edits.begin(), fix->edits.end(), [&](const TextEdit& e) {
      return std::any_of(edits.begin(), edits.end(), [&](const TextEdit& o) {
        return (e.begin < o.end && o.begin < e.end) || e.begin == o.begin;
      });
    });
    if (overlaps) continue;
    edits.insert(edits.end(), fix->edits.begin(), fix->edits.end());
    ++fixes;
  }
  std::sort(edits.begin(), edits.end(),
            [](const TextEdit& a, const TextEdit& b) { return a.begin < b.begin; });
  return edits;
}

// Applies edits (sorted, disjoint) to `text` whose offsets start at `base`.
std::string Apply(std::string_view text, std::uint32_t base, const std::vector<TextEdit>& edits) {
  std::string out;
  std::uint32_t at = 0;
  for (const TextEdit& e : edits) {
    const std::uint32_t b = e.begin - base, end = e.end - base;
    if (b < at || end > text.size()) continue;
    out.append(text.substr(at, b - at));
    out += e.replacement;
    at = end;
  }
  out.append(text.substr(at));
  return out;
}

// nbformat keeps a cell's source as a list of lines, each with its newline.
nlohmann::ordered_json SourceLines(std::string_view source) {
  nlohmann::ordered_json lines = nlohmann::ordered_json::array();
  for (std::size_t at = 0; at < source.size();) {
    std::size_t eol = source.find('\n', at);
    eol = eol == std::string_view::npos ? source.size() : eol + 1;
    lines.push_back(std::string(source.substr(at, eol - at)));
    at = eol;
  }
  return lines;
}

Result<std::string> ApplyToNotebook(const Source& source, const ScriptText& text,
                                    const std::vector<TextEdit>& edits) {
  auto nb = nlohmann::ordered_json::parse(source.bytes, nullptr, false);
  if (nb.is_discarded()) return MakeError(source.display_name + ": not a Jupyter notebook");
  std::size_t code_cell = 0;
  int number = 0;
  for (auto& cell : nb["cells"]) {
    ++number;
    if (code_cell >= text.cells.size() || text.cells[code_cell].number != number) continue;
    const script::Cell& c = text.cells[code_cell++];
    std::vector<TextEdit> mine;
    for (const TextEdit& e : edits) {
      if (e.begin >= c.begin && e.end <= c.begin + c.source.size()) mine.push_back(e);
    }
    if (mine.empty()) continue;
    const std::string fixed = Apply(c.source, c.begin, mine);
    if (cell["source"].is_string()) {
      cell["source"] = fixed;
    } else {
      cell["source"] = SourceLines(fixed);
    }
  }
  // Jupyter writes one-space indents and a final newline.
  return nb.dump(1) + "\n";
}

}  // namespace

Result<Report> CheckScript(const Source& source, const CheckOptions& options, bool free_model) {
  auto checked = CheckParsed(source, options, free_model);
  if (!checked) return checked.error();
  return std::move(checked->report);
}

Result<FixOutcome> FixScript(const Source& source, const CheckOptions& options, bool unsafe) {
  FixOutcome outcome;
  Source current = source;
  for (int pass = 0;; ++pass) {
    auto checked = CheckParsed(current, options);
    if (!checked) return checked.error();
    int fixes = 0;
    const std::vector<TextEdit> edits =
        EditsToApply(checked->report, checked->text.code, unsafe, fixes);
    if (edits.empty() || pass == kMaxFixPasses) {
      for (const Diagnostic& d : checked->report.findings) {
        outcome.unsafe_left += !unsafe && d.fix && !d.fix->edits.empty() &&
                               d.fix->applicability == FixApplicability::kUnsafe;
      }
      outcome.after = std::move(checked->report);
      break;
    }
    if (checked->text.notebook) {
      auto fixed = ApplyToNotebook(current, checked->text, edits);
      if (!fixed) return fixed.error();
      current.bytes = std::move(*fixed);
    } else {
      current.bytes = Apply(current.bytes, 0, edits);
    }
    outcome.applied += fixes;
  }
  outcome.bytes = std::move(current.bytes);
  return outcome;
}

std::string UnifiedDiff(std::string_view name, std::string_view before, std::string_view after) {
  if (before == after) return {};
  auto lines = [](std::string_view s) {
    std::vector<std::string> out;
    for (std::string_view l : SplitLines(s)) out.emplace_back(l);
    if (!s.empty() && s.back() == '\n' && !out.empty() && out.back().empty()) out.pop_back();
    return out;
  };
  dtl::Diff<std::string, std::vector<std::string>> diff(lines(before), lines(after));
  diff.onHuge();
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream out;
  out << "--- a/" << name << "\n+++ b/" << name << "\n";
  diff.printUnifiedFormat(out);
  return out.str();
}

}  // namespace tpudoctor

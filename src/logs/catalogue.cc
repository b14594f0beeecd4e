#include "src/logs/catalogue.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <memory>

#include "src/logs/line_shape.h"
#include "tpudoctor/support/embedded.h"

namespace tpudoctor::logs {
namespace {

constexpr std::size_t kMaxLineText = 300;
// How many lines before a message its context may be on (a traceback's frames above it), and how
// many lines continuing it after (the op or the file it was about).
constexpr std::size_t kContextLines = 5;
constexpr std::size_t kContinuationLines = 3;

struct Compiled {
  std::vector<CatalogueEntry> entries;
  std::vector<std::unique_ptr<RE2>> patterns;  // one per entry, the whole match as group 0
  std::vector<std::unique_ptr<RE2>> contexts;  // one per entry, null when it has none
  std::unique_ptr<RE2::Set> set;               // all of them, to find candidates in one pass
  std::string error;
};

std::optional<MessageRole> ParseRole(std::string_view role) {
  if (role == "cause") return MessageRole::kCause;
  if (role == "knock_on") return MessageRole::kKnockOn;
  if (role == "wrapper") return MessageRole::kWrapper;
  return std::nullopt;
}

const Compiled& TheCatalogue() {
  static const Compiled* compiled = [] {
    auto* c = new Compiled();
    RE2::Options options;
    options.set_log_errors(false);
    c->set = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
    for (const auto& row : EmbeddedTsvRows("data/logs/catalogue.tsv")) {
      const std::optional<MessageRole> role = row.size() == 7 ? ParseRole(row[1]) : std::nullopt;
      if (!role) {
        c->error = "data/logs/catalogue.tsv: a row without 7 columns or with an unknown role";
        break;
      }
      std::string context, context_category;
      if (row[6] != "-") {
        const std::size_t arrow = row[6].rfind("=>");
        if (arrow == std::string_view::npos) {
          c->error = "data/logs/catalogue.tsv: context of " + std::string(row[0]) +
                     " is not REGEX=>category";
          break;
        }
        context = std::string(row[6].substr(0, arrow));
        context_category = std::string(row[6].substr(arrow + 2));
      }
      auto context_re = context.empty() ? nullptr : std::make_unique<RE2>(context, options);
      if (context_re && !context_re->ok()) {
        c->error = "data/logs/catalogue.tsv: context of " + std::string(row[0]) +
                   " does not compile: " + context_re->error();
        break;
      }
      auto re = std::make_unique<RE2>(row[4], options);
      std::string set_error;
      if (!re->ok() || c->set->Add(row[4], &set_error) < 0) {
        c->error = "data/logs/catalogue.tsv: pattern of " + std::string(row[0]) +
                   " does not compile: " + re->error();
        break;
      }
      c->entries.push_back({std::string(row[0]), std::string(row[2]), std::string(row[3]),
                            std::string(row[5]), *role, context, context_category});
      c->patterns.push_back(std::move(re));
      c->contexts.push_back(std::move(context_re));
    }
    if (c->error.empty() && !c->set->Compile()) c->error = "data/logs/catalogue.tsv: too large";
    if (!c->error.empty()) {
      c->entries.clear();
      c->patterns.clear();
      c->contexts.clear();
    }
    return c;
  }();
  return *compiled;
}

// A line that continues the message above it: indented, or TensorFlow's `[[node ...]]` naming the
// op that failed. Frameworks print what a message is about there (the file a request was for, the
// op that raised it).
bool ContinuesMessage(std::string_view line) {
  if (line.empty()) return false;
  if (line.front() == ' ' || line.front() == '\t') return true;
  return line.substr(0, 2) == "[[";
}

// The lines a message's context is read from: up to kContextLines before it, its own, and the
// lines that continue it (at most kContinuationLines).
bool InContext(const RE2& context, const std::vector<std::string>& lines, std::size_t at) {
  const std::size_t first = at >= kContextLines ? at - kContextLines : 0;
  for (std::size_t i = first; i <= at; ++i) {
    if (RE2::PartialMatch(lines[i], context)) return true;
  }
  for (std::size_t i = at + 1; i < lines.size() && i <= at + kContinuationLines; ++i) {
    if (!ContinuesMessage(lines[i])) break;
    if (RE2::PartialMatch(lines[i], context)) return true;
  }
  return false;
}

// The text's lines, undecorated (src/logs/line_shape.h).
std::vector<std::string> UnshapedLines(std::string_view text) {
  std::vector<std::string> lines;
  std::string unshaped;
  for (std::size_t pos = 0; pos <= text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = UnshapeLine(line, unshaped);
    lines.emplace_back(line);
    if (end == text.size()) break;
    pos = end + 1;
  }
  return lines;
}

}  // namespace

const std::vector<CatalogueEntry>& CatalogueEntries() { return TheCatalogue().entries; }
const std::string& CatalogueLoadError() { return TheCatalogue().error; }

std::vector<CatalogueMatch> MatchCatalogue(std::string_view text) {
  const Compiled& c = TheCatalogue();
  std::vector<CatalogueMatch> out;
  if (c.entries.empty()) return out;
  const std::vector<std::string> lines = UnshapedLines(text);
  std::vector<int> hits;
  for (std::size_t at = 0; at < lines.size(); ++at) {
    const std::string& line = lines[at];
    hits.clear();
    if (!c.set->Match(line, &hits)) continue;
    std::vector<CatalogueMatch> on_line;
    for (int i : hits) {
      re2::StringPiece whole;
      if (!c.patterns[i]->Match(line, 0, line.size(), RE2::UNANCHORED, &whole, 1)) continue;
      const CatalogueEntry& e = c.entries[i];
      const bool in_context = c.contexts[i] && InContext(*c.contexts[i], lines, at);
      on_line.push_back(
          {&e, in_context ? e.context_category : e.category, static_cast<std::int64_t>(at + 1),
           static_cast<std::size_t>(whole.data() - line.data()), line.substr(0, kMaxLineText)});
    }
    std::sort(on_line.begin(), on_line.end(),
              [](const CatalogueMatch& a, const CatalogueMatch& b) { return a.column < b.column; });
    out.insert(out.end(), on_line.begin(), on_line.end());
  }
  return out;
}

std::optional<CatalogueMatch> RootCauseOf(const std::vector<CatalogueMatch>& matches) {
  const CatalogueMatch* cause = nullptr;
  for (const CatalogueMatch& m : matches) {
    if (m.entry->role != MessageRole::kCause) continue;
    if (cause != nullptr && m.line != cause->line) break;           // a later line: an effect
    if (cause == nullptr || m.column >= cause->column) cause = &m;  // innermost on its line
  }
  if (cause != nullptr) return *cause;
  for (const CatalogueMatch& m : matches) {
    if (m.entry->role == MessageRole::kKnockOn) return m;
  }
  return std::nullopt;
}

}  // namespace tpudoctor::logs

#include "src/logs/fallback.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "src/logs/line_shape.h"
#include "tpudoctor/support/embedded.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::logs {
namespace {

bool WordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// One failure marker: what it means and the pattern of a line that shows it.
struct Marker {
  const char* name;
  const char* pattern;
};

// From what every framework prints when a run dies, not from any corpus file's wording.
constexpr Marker kMarkers[] = {
    {"Python traceback", R"(Traceback \(most)"},
    // A traceback's frames survive when its header was cut off or interleaved away.
    {"Python traceback", R"(^\s*File ".+", line \d+, in )"},
    // TensorFlow's error context: the op that failed and the number of root errors.
    {"TensorFlow error", R"(Caused by op '|Caused by op u'|\d+ root error\(s\) found)"},
    // The failed op TensorFlow attributes an error to (`[[Node: ...` in TF1, `[[{{node ...}}]]` in
    // TF2): it prints that context only on an op's error.
    {"TensorFlow error", R"(^\s*\[\[(?:Node: |\{\{node ))"},
    // absl statuses as TensorFlow prints them (`Internal: ...`, `(0) Unavailable: ...`, an RPC's
    // `status = "Unavailable: ..."`).
    {"status code",
     R"((?:^\s*|\(\d+\)\s+|Error: |status = ")(?:Internal|Unavailable|Out of range|Resource exhausted|Invalid argument|Unimplemented|Deadline exceeded|Failed precondition|Not found|Aborted|Permission denied|Data loss): )"},
    {"retries exhausted", R"((?i)all \d+ retry attempts failed|retries exhausted)"},
    // A line that is an exception: `RuntimeError: ...`, `jax.errors.XlaRuntimeError: ...`,
    // pytest's `E   ValueError: ...`, a bare `KeyboardInterrupt`.
    {"exception",
     R"(^\s*(?:E\s+)?(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::|\s*$))"},
    {"status code",
     R"(\b(?:RESOURCE_EXHAUSTED|UNIMPLEMENTED|DEADLINE_EXCEEDED|UNAVAILABLE|INTERNAL|INVALID_ARGUMENT|FAILED_PRECONDITION|NOT_FOUND|ABORTED|PERMISSION_DENIED|DATA_LOSS|OUT_OF_RANGE|CANCELLED)\s*:)"},
    {"status code", R"(\bDeadline Exceeded\b)"},
    {"check failure", R"((?i)\bcheck failed\b|\bRET_CHECK failure\b)"},
    // glog's fatal level, bare (`F0101 12:00:00`) or after TensorFlow's timestamp.
    {"fatal log line",
     R"(^F\d{4} \d\d:\d\d|^F [\w/.+-]+\.(?:cc|h|cpp):\d+\] |^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: F |Fatal Python error|\bFATAL\b:?)"},
    // XLA lists its largest allocations only when a program did not fit.
    {"memory dump", R"(Largest program allocations|^\s*Allocation type: |Unpadded size: )"},
    // A structured (JSON) log entry at error level: Cloud Logging, AI Platform, Vertex AI.
    {"error log entry", R"re("(?:severity|levelname|level)"\s*:\s*"(?:ERROR|CRITICAL|FATAL)")re"},
    {"fatal signal",
     R"(\b(?:SIGSEGV|SIGABRT|SIGKILL|SIGBUS|SIGILL)\b|Segmentation fault|core dumped|^\s*Killed\s*$|^\[\d+\][+-]?\s+Killed\s|\bAborted\b)"},
    {"non-zero exit",
     R"((?i)exit(?:ed with)? (?:code|status)[ :=]*-?[1-9]|non-zero exit|exitcode[ :=]+-?[1-9])"},
    {"error line", R"(^\s*(?:\[?ERROR\]?[: ]|Error: |error: ))"},
};

const std::vector<std::pair<std::string, std::unique_ptr<RE2>>>& Markers() {
  static const auto* markers = [] {
    auto* v = new std::vector<std::pair<std::string, std::unique_ptr<RE2>>>();
    RE2::Options options;
    options.set_log_errors(false);
    for (const Marker& m : kMarkers)
      v->emplace_back(m.name, std::make_unique<RE2>(m.pattern, options));
    return v;
  }();
  return *markers;
}

struct Model {
  std::vector<std::string> categories;
  struct Word {
    double idf = 0;
    std::vector<double> centroid;  // by category
  };
  std::unordered_map<std::string, Word> words;
};

double ParseDouble(std::string_view s) {
  double v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The model's rows: data/logs/fallback_model.tsv, or for scripts/logs_loso.py's folds the file
// TPUD_LOGS_FALLBACK_MODEL names (a model trained without the held-out logs).
std::vector<std::vector<std::string_view>> ModelRows() {
  static const std::string* override_text = [] {
    const char* path = std::getenv("TPUD_LOGS_FALLBACK_MODEL");
    if (path == nullptr || *path == '\0') return static_cast<std::string*>(nullptr);
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return new std::string(text.str());
  }();
  if (override_text != nullptr) return TsvRows(*override_text);
  return EmbeddedTsvRows("data/logs/fallback_model.tsv");
}

const Model& TheModel() {
  static const Model* model = [] {
    auto* m = new Model();
    for (const auto& row : ModelRows()) {
      if (row.empty()) continue;
      if (row[0] == "categories") {
        for (std::size_t i = 1; i < row.size(); ++i) m->categories.emplace_back(row[i]);
      } else if (row[0] == "word" && row.size() == 3 + m->categories.size()) {
        Model::Word w;
        w.idf = ParseDouble(row[2]);
        for (std::size_t i = 3; i < row.size(); ++i) w.centroid.push_back(ParseDouble(row[i]));
        m->words.emplace(std::string(row[1]), std::move(w));
      }
    }
    return m;
  }();
  return *model;
}

}  // namespace

std::vector<std::string> LogWords(std::string_view text) {
  std::set<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!WordChar(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    int letters = 0, digits = 0;
    while (j < text.size() && WordChar(text[j])) {
      letters += std::isalpha(static_cast<unsigned char>(text[j])) != 0;
      digits += std::isdigit(static_cast<unsigned char>(text[j])) != 0;
      ++j;
    }
    const std::size_t len = j - i;
    if (len >= 3 && len <= 40 && letters > 0 && digits < letters) {
      out.insert(AsciiLower(text.substr(i, len)));
    }
    i = j;
  }
  return {out.begin(), out.end()};
}

// The kind of failure a line shows (the first marker that matches), or null.
const char* MarkerOf(std::string_view line) {
  for (const auto& [name, re] : Markers()) {
    if (RE2::PartialMatch(line, *re)) return name.c_str();
  }
  return nullptr;
}

// TensorFlow 2 warns that a rendezvous aborted with OUT_OF_RANGE "End of sequence" (and names
// the iterator op on the next line) whenever a pass over a finite dataset ends: in a healthy
// Keras run, once an epoch. Neither line is a failure.
bool BenignEndOfData(std::string_view line) {
  return line.find("aborting with status: OUT_OF_RANGE: End of sequence") != std::string_view::npos;
}

std::vector<FailureLine> FailureEvidence(std::string_view text, std::size_t max) {
  std::vector<FailureLine> found;
  std::string unshaped;
  std::int64_t line_no = 0;
  std::size_t pos = 0;
  bool after_benign = false;  // the op context lines that follow a benign end of data
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = UnshapeLine(line, unshaped);
    const bool context = Trim(line).starts_with("[[");
    after_benign = BenignEndOfData(line) || (after_benign && context);
    if (!after_benign) {
      if (const char* marker = MarkerOf(line)) {
        found.push_back({line_no, std::string(line.substr(0, 300)), marker});
      }
    }
    if (end == text.size()) break;
    pos = end + 1;
  }
  // The last ones first: a log ends where the run died. Keep one line per marker kind first.
  std::reverse(found.begin(), found.end());
  std::vector<FailureLine> out;
  std::set<std::string> kinds;
  for (const FailureLine& f : found) {
    if (out.size() < max && kinds.insert(f.marker).second) out.push_back(f);
  }
  return out;
}

std::optional<CategoryGuess> GuessCategory(std::string_view text) {
  const Model& m = TheModel();
  if (m.categories.empty()) return std::nullopt;
  std::vector<std::pair<const std::string*, const Model::Word*>> present;
  double norm = 0;
  for (const std::string& w : LogWords(text)) {
    auto it = m.words.find(w);
    if (it == m.words.end()) continue;
    present.emplace_back(&it->first, &it->second);
    norm += it->second.idf * it->second.idf;
  }
  if (present.empty() || norm <= 0) return std::nullopt;
  norm = std::sqrt(norm);
  std::vector<double> score(m.categories.size(), 0.0);
  for (const auto& [word, w] : present) {
    for (std::size_t c = 0; c < score.size(); ++c) score[c] += w->idf * w->centroid[c] / norm;
  }
  std::vector<std::size_t> order(score.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return score[a] > score[b] || (score[a] == score[b] && m.categories[a] < m.categories[b]);
  });
  CategoryGuess g;
  g.category = m.categories[order[0]];
  g.similarity = score[order[0]];
  if (order.size() > 1) {
    g.runner_up = m.categories[order[1]];
    g.runner_up_similarity = score[order[1]];
  }
  std::vector<std::pair<double, const std::string*>> weighed;
  for (const auto& [word, w] : present) weighed.emplace_back(w->idf * w->centroid[order[0]], word);
  std::sort(weighed.begin(), weighed.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && *a.second < *b.second);
  });
  for (std::size_t i = 0; i < weighed.size() && i < 6 && weighed[i].first > 0; ++i)
    g.words.push_back(*weighed[i].second);
  return g;
}

}  // namespace tpudoctor::logs

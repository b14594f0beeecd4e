// The layers of `tpu-doctor logs` after the exact signatures, private to src/logs:
//
// - structural evidence: whether a log shows a failure at all (a Python traceback or exception
//   line, an XLA/absl status code, `Check failed`, a fatal signal or exit code, a killed process),
//   so that a healthy log with warnings gets "no failure found" and a failed one never does;
// - the scored fallback: the category whose words the log shares most (TF-IDF centroids trained
//   offline by scripts/train_logs_fallback.py, data/logs/fallback_model.tsv), with its similarity
//   as the confidence and the runner-up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpudoctor::logs {

// Lower-cased runs of [A-Za-z0-9_], 3 to 40 long, with more letters than digits, each once.
// Must match `tokens()` in scripts/train_logs_fallback.py.
std::vector<std::string> LogWords(std::string_view text);

struct FailureLine {
  std::int64_t line = 0;  // 1-based, in the text given
  std::string text;
  std::string marker;  // what makes it a failure: "traceback", "exception", "status code", ...
};

// The lines of `text` that show a failure (at most `max` of them, the last ones first: the end of
// a log is where it died). Empty for a healthy log.
std::vector<FailureLine> FailureEvidence(std::string_view text, std::size_t max = 4);

struct CategoryGuess {
  std::string category;
  double similarity = 0;  // cosine similarity to the category's centroid, 0..1
  std::string runner_up;
  double runner_up_similarity = 0;
  std::vector<std::string> words;  // the log's words that weigh most for the category
};

// Nearest category by the fallback model; nullopt when the log shares no word with the model.
std::optional<CategoryGuess> GuessCategory(std::string_view text);

}  // namespace tpudoctor::logs

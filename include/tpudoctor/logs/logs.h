// Log diagnosis: why did a TPU run die? `tpu-doctor logs` streams one or more logs (plain or
// gzip, or stdin) through a knowledge base of failure signatures (data/logs/signatures.json,
// embedded) and returns the causes in rank order, root cause first.
//
// How it works: a multi-literal prefilter (Vectorscan) finds the few lines that contain a
// signature's keywords; only those lines are matched against the signatures' RE2 patterns, whose
// named groups become `extracted` fields. Repeats of a signature collapse into one cause with a
// count; causes marked `secondary` in the data (a lost worker, `Socket closed`) are knock-ons
// when a primary cause was found, and are listed after it. Memory stays bounded whatever the
// input: lines longer than kMaxLineBytes are scanned in pieces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tpudoctor/diag/diagnostic.h"
#include "tpudoctor/support/result.h"

namespace tpudoctor {

inline constexpr std::size_t kMaxLineBytes = 64 * 1024;
inline constexpr int kLogsSchemaVersion = 1;

struct Evidence {
  std::string file;
  std::int64_t line = 0;  // 1-based
  std::string text;       // the line, cut to 400 bytes
};

struct LogCause {
  std::string category;   // "hbm_oom", "unsupported_op", ... (the corpus's names)
  std::string signature;  // id of the signature that matched
  Severity severity = Severity::kError;
  std::string title;
  std::vector<Evidence> evidence;                              // first occurrences, at most 3
  std::int64_t count = 0;                                      // occurrences in all inputs
  std::vector<std::pair<std::string, std::string>> extracted;  // in a fixed order per signature
  std::string explanation;
  std::string fix;
  bool knock_on = false;  // a consequence of a higher-ranked cause
  // Which layer named it: "signature" (an exact failure signature of the knowledge base) or
  // "fallback" (no signature matched, but the log shows a failure: the category whose words it
  // shares most, by the model scripts/train_logs_fallback.py trains, with `confidence` the cosine
  // similarity to that category, 0..1).
  std::string layer = "signature";
  double confidence = 1.0;
};

struct LogDiagnosis {
  std::vector<LogCause> causes;  // rank order: root cause first
  std::vector<std::string> files;
  std::int64_t lines = 0;
  std::int64_t bytes = 0;
  std::string framework;  // "jax", "tensorflow", "pytorch/xla" when the log says
  std::vector<std::pair<std::string, std::string>> versions;  // ("libtpu", "0.1.dev...") ...
  // What reading the input ran into without failing: a file that shrank while it was read.
  std::vector<std::string> notes;
};

// Reads every path ("-" is standard input; gzip is detected by content) and diagnoses them as one
// incident (several workers' logs of the same run). Files are read with read() in bounded chunks,
// never mapped: a log truncated while it is read gives what was read and a note; a FIFO is
// streamed once a writer has written to it (an error after 5 s without one). Errors: unreadable
// or binary input, truncated gzip, an empty input set.
Result<LogDiagnosis> DiagnoseLogs(const std::vector<std::string>& paths);

// Diagnoses in-memory text (tests, the Python module).
Result<LogDiagnosis> DiagnoseLogText(const std::string& name, std::string_view text);

// The signature knowledge base, for `tpu-doctor logs --signatures` and tests.
struct SignatureInfo {
  std::string id;
  std::string category;
  Severity severity;
  std::string title;
  std::vector<std::string> match_examples;
  std::vector<std::string> no_match_examples;
};
const std::vector<SignatureInfo>& LogSignatures();

// Matches one line against the knowledge base; returns the ids of the signatures it matches
// (their keyword and pattern, ignoring context conditions). For per-signature tests.
std::vector<std::string> MatchLine(std::string_view line);

std::string RenderLogsText(const LogDiagnosis& diagnosis);
std::string RenderLogsJson(const LogDiagnosis& diagnosis);

}  // namespace tpudoctor

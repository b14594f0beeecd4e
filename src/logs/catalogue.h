// The message catalogue (data/logs/catalogue.tsv), private to src/logs: what XLA, the TPU runtime,
// JAX, TensorFlow and PyTorch/XLA print when a run fails, each message with the category of its
// cause, its role, and the source that emits it. A log is read the way an engineer reads it: find
// the messages, unwrap the ones that wrap others, and take the first cause in time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpudoctor::logs {

enum class MessageRole {
  kCause,    // the message names the problem
  kKnockOn,  // it reports an effect whose cause is elsewhere (a peer closed its socket)
  kWrapper,  // it wraps another message (a CHECK, a compile failure)
};

struct CatalogueEntry {
  std::string id, category, framework, source;
  MessageRole role = MessageRole::kCause;
  // When the lines just before the message (or its own) match `context`, the cause is
  // `context_category` instead (a permission error inside a checkpoint restore). Empty: none.
  std::string context, context_category;
};

struct CatalogueMatch {
  const CatalogueEntry* entry = nullptr;
  std::string category;    // the entry's, or its context's when the context matched
  std::int64_t line = 0;   // 1-based, in the text given
  std::size_t column = 0;  // where the message starts in the (unshaped) line
  std::string text;        // the line, unshaped, at most 300 bytes
};

// The entries, in the file's order. Empty with LoadError() set when a pattern does not compile.
const std::vector<CatalogueEntry>& CatalogueEntries();
const std::string& CatalogueLoadError();

// Every catalogue message in `text`, in line order, then by column.
std::vector<CatalogueMatch> MatchCatalogue(std::string_view text);

// What the matches say caused the failure:
// - the first line, in time, that holds a cause wins (later messages are its effects);
// - on that line, the innermost cause (the one that starts last: `Check failed ...
// (INVALID_ARGUMENT:
//   <cause>)`, `INTERNAL: ...: RESOURCE_EXHAUSTED: ...`) is the message, the rest wrap it;
// - with no cause anywhere, the first knock-on (its cause is not in the excerpt).
// Wrappers never decide. Nullopt when the log holds neither.
std::optional<CatalogueMatch> RootCauseOf(const std::vector<CatalogueMatch>& matches);

}  // namespace tpudoctor::logs

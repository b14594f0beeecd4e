// Streams log bytes through the knowledge base: Feed() any chunks, then Finish(). Keeps, per
// signature, the count, the first occurrences and the last one — never the whole log. Private to
// src/logs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/logs/knowledge_base.h"

struct hs_scratch;

namespace tpudoctor::logs {

struct Occurrence {
  std::size_t file_index = 0;
  std::int64_t line = 0;
  std::string text;
  std::vector<std::pair<std::string, std::string>> extracted;
};

struct SignatureHits {
  std::int64_t count = 0;
  std::vector<Occurrence> first;  // at most kKeptOccurrences
  Occurrence last;
};

inline constexpr std::size_t kKeptOccurrences = 3;
// Framework and version detectors look at the first bytes of each file only.
inline constexpr std::int64_t kDetectBytes = 8 << 20;
inline constexpr std::size_t kKeepHeadBytes = 1 << 20;
inline constexpr std::size_t kKeepTailBytes = 256 << 10;

class Scanner {
 public:
  explicit Scanner(const KnowledgeBase& kb);
  ~Scanner();
  Scanner(const Scanner&) = delete;
  Scanner& operator=(const Scanner&) = delete;

  void StartFile(std::size_t file_index);
  void Feed(std::string_view data);
  void FinishFile();

  const std::vector<SignatureHits>& hits() const { return hits_; }
  std::int64_t lines() const { return total_lines_; }
  // Lines of each file, by file index (after FinishFile).
  const std::vector<std::int64_t>& file_lines() const { return file_lines_; }
  std::int64_t bytes() const { return total_bytes_; }

  // The text the later layers read (structural evidence, the scored fallback): the first
  // kKeepHeadBytes of the input and the last kKeepTailBytes of each file beyond them.
  std::string EvidenceText() const { return head_ + tails_; }

  // Matches one line with every signature whose keyword it holds (no context conditions).
  std::vector<int> MatchOne(std::string_view line);

 private:
  void ScanRegion(std::string_view region, bool region_is_one_line);
  void Keep(std::string_view data);  // head_ and tail_
  void ProcessLine(std::string_view line, std::int64_t line_no,
                   const std::vector<int>& keyword_ids);
  // On a match, fills `out` with the named groups and returns where the match starts in `line`.
  std::optional<std::size_t> MatchSignature(
      int sig, std::string_view line, std::vector<std::pair<std::string, std::string>>& out) const;
  void Record(int sig, std::int64_t line_no, std::string_view line, std::size_t match_at,
              std::vector<std::pair<std::string, std::string>> extracted);

  const KnowledgeBase& kb_;
  hs_scratch* scratch_ = nullptr;
  std::vector<SignatureHits> hits_;
  std::vector<std::int64_t> after_line_;  // per signature: line where its `after` last matched
  std::string carry_;                     // the unfinished last line, at most kMaxLineBytes
  std::string work_;
  std::size_t file_index_ = 0;
  std::int64_t line_no_ = 1;  // line number of the first byte not yet consumed
  std::int64_t total_lines_ = 0;
  std::int64_t lines_at_file_start_ = 0;
  std::vector<std::int64_t> file_lines_;
  std::int64_t total_bytes_ = 0;
  bool file_has_bytes_ = false;
  bool in_partial_line_ = false;  // pieces of an over-long line were scanned since the last newline
  std::int64_t file_bytes_ = 0;   // bytes of the current file scanned so far
  std::vector<std::pair<unsigned, unsigned long long>> raw_hits_;  // (literal id, end offset)
  std::string head_;                  // the first kKeepHeadBytes of all input
  std::int64_t file_head_bytes_ = 0;  // of the current file, in head_
  std::string tail_;                  // the current file's last kKeepTailBytes
  std::string tails_;                 // the tails of files longer than their part of head_
  std::string unshaped_;              // UnshapeLine's buffer
};

}  // namespace tpudoctor::logs

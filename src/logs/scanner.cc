#include "src/logs/scanner.h"

#include <hs/hs.h>

#include <algorithm>
#include <cstring>

#include "src/logs/line_shape.h"
#include "tpudoctor/support/strings.h"

namespace tpudoctor::logs {
namespace {

constexpr std::size_t kEvidenceBytes = 400;

int OnHit(unsigned int id, unsigned long long /*from*/, unsigned long long to,
          unsigned int /*flags*/, void* ctx) {
  static_cast<std::vector<std::pair<unsigned, unsigned long long>>*>(ctx)->emplace_back(id, to);
  return 0;
}

// Newlines in `s`, sixteen bytes at a time (GCC's portable vector extension: SSE2 on x86-64,
// NEON on arm64): per-byte counters of 64-byte blocks, summed before they can overflow. About
// twice glibc's memchr called once per line on ~100-byte lines (bench/logs_bench.sh).
std::int64_t CountNewlines(std::string_view s) {
  using Bytes = signed char __attribute__((vector_size(16)));
  constexpr std::size_t kBlock = 64;
  constexpr std::size_t kMaxBlocks = 255;  // a byte counter gains at most 1 per block
  const Bytes newline = Bytes{} + '\n';
  std::int64_t n = 0;
  const char* p = s.data();
  std::size_t left = s.size();
  while (left >= kBlock) {
    const std::size_t blocks = std::min(left / kBlock, kMaxBlocks);
    Bytes counts{};
    for (std::size_t b = 0; b < blocks; ++b, p += kBlock) {
      Bytes v[4];
      std::memcpy(v, p, kBlock);
      // A lane compares to -1 where it holds a newline.
      counts -= (v[0] == newline) + (v[1] == newline) + (v[2] == newline) + (v[3] == newline);
    }
    left -= blocks * kBlock;
    unsigned char lanes[sizeof(Bytes)];
    std::memcpy(lanes, &counts, sizeof lanes);
    for (const unsigned char lane : lanes) n += lane;
  }
  for (; left > 0; --left, ++p) n += *p == '\n';
  return n;
}

}  // namespace

Scanner::Scanner(const KnowledgeBase& kb) : kb_(kb) {
  hits_.resize(kb.signatures().size());
  after_line_.assign(kb.signatures().size(), -1);
  // One scratch serves both databases: allocating for each grows it to fit both.
  if (kb.database() != nullptr) hs_alloc_scratch(kb.database(), &scratch_);
  if (kb.cause_database() != nullptr) hs_alloc_scratch(kb.cause_database(), &scratch_);
}

Scanner::~Scanner() {
  if (scratch_ != nullptr) hs_free_scratch(scratch_);
}

void Scanner::StartFile(std::size_t file_index) {
  file_index_ = file_index;
  line_no_ = 1;
  carry_.clear();
  file_has_bytes_ = false;
  file_bytes_ = 0;
  lines_at_file_start_ = total_lines_;
  std::fill(after_line_.begin(), after_line_.end(), -1);
  if (!head_.empty() && head_.size() < kKeepHeadBytes) head_.push_back('\n');
  file_head_bytes_ = 0;
  tail_.clear();
}

void Scanner::Keep(std::string_view data) {
  if (head_.size() < kKeepHeadBytes) {
    const std::size_t take = std::min(data.size(), kKeepHeadBytes - head_.size());
    head_.append(data.substr(0, take));
    file_head_bytes_ += static_cast<std::int64_t>(take);
  }
  if (data.size() >= kKeepTailBytes) {
    tail_.assign(data.substr(data.size() - kKeepTailBytes));
  } else {
    if (tail_.size() + data.size() > kKeepTailBytes)
      tail_.erase(0, tail_.size() + data.size() - kKeepTailBytes);
    tail_.append(data);
  }
}

void Scanner::Feed(std::string_view data) {
  if (data.empty()) return;
  Keep(data);
  total_bytes_ += static_cast<std::int64_t>(data.size());
  file_has_bytes_ = true;
  if (!carry_.empty()) {
    // Finish the line carried over from the previous chunk (a small copy), then scan in place.
    const std::size_t nl = data.find('\n');
    const std::size_t take = nl == std::string_view::npos ? data.size() : nl + 1;
    carry_.append(data.substr(0, std::min(take, kMaxLineBytes)));
    data.remove_prefix(take);
    if (nl != std::string_view::npos) {
      ScanRegion(carry_, false);
      carry_.clear();
    } else if (carry_.size() >= kMaxLineBytes) {
      ScanRegion(carry_, true);
      carry_.clear();
      return;
    } else {
      return;
    }
  }
  const std::size_t last_nl = data.rfind('\n');
  if (last_nl == std::string_view::npos) {
    // No line ends here: keep it, unless the line is already too long to keep.
    if (data.size() >= kMaxLineBytes) {
      ScanRegion(data, /*region_is_one_line=*/true);
    } else {
      carry_.assign(data);
    }
    return;
  }
  ScanRegion(data.substr(0, last_nl + 1), false);
  std::string_view rest = data.substr(last_nl + 1);
  if (rest.size() >= kMaxLineBytes) {
    ScanRegion(rest, true);
  } else {
    carry_.assign(rest);
  }
}

void Scanner::FinishFile() {
  if (!carry_.empty()) {
    ScanRegion(carry_, true);
    carry_.clear();
  }
  if (in_partial_line_) ++total_lines_;  // the last line had no newline
  // The tail of a file that did not fit in the head (a bounded total: the later files' tails are
  // dropped once it is full).
  const std::int64_t beyond_head = file_bytes_ - file_head_bytes_;
  if (beyond_head > 0 && tails_.size() < 4 * kKeepTailBytes) {
    const std::size_t take =
        std::min<std::size_t>(tail_.size(), static_cast<std::size_t>(beyond_head));
    tails_.append("\n");
    tails_.append(tail_.substr(tail_.size() - take));
  }
  in_partial_line_ = false;
  if (file_lines_.size() <= file_index_) file_lines_.resize(file_index_ + 1, 0);
  file_lines_[file_index_] = total_lines_ - lines_at_file_start_;
}

// Scans complete lines (or one piece of an over-long line). Only lines with a keyword hit are
// looked at line by line; the rest is only counted, with memchr.
void Scanner::ScanRegion(std::string_view region, bool region_is_one_line) {
  raw_hits_.clear();
  const hs_database* db = file_bytes_ < kDetectBytes ? kb_.database() : kb_.cause_database();
  file_bytes_ += static_cast<std::int64_t>(region.size());
  if (scratch_ != nullptr) {
    hs_scan(db, region.data(), static_cast<unsigned>(region.size()), 0, scratch_, OnHit,
            &raw_hits_);
  }
  std::sort(raw_hits_.begin(), raw_hits_.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  std::int64_t newlines = 0;  // newlines in region[0, counted)
  std::size_t counted = 0;
  std::vector<int> ids;
  std::size_t i = 0;
  while (i < raw_hits_.size()) {
    const std::size_t last = static_cast<std::size_t>(raw_hits_[i].second) - 1;  // hit's last byte
    std::size_t start = 0;
    std::size_t end = region.size();
    if (!region_is_one_line) {
      const std::size_t nl = region.rfind('\n', last);
      start = nl == std::string_view::npos ? 0 : nl + 1;
      end = std::min(region.find('\n', last), region.size());
    }
    ids.clear();
    for (; i < raw_hits_.size() && raw_hits_[i].second <= end; ++i) {
      ids.push_back(static_cast<int>(raw_hits_[i].first));
    }
    newlines += CountNewlines(region.substr(counted, start - counted));
    counted = start;
    std::string_view line = region.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ProcessLine(line, line_no_ + newlines, ids);
  }
  if (region_is_one_line) {  // a piece of a long line: the line number does not move
    in_partial_line_ = true;
    return;
  }
  in_partial_line_ = false;
  newlines += CountNewlines(region.substr(counted));
  line_no_ += newlines;
  total_lines_ += newlines;
}

void Scanner::ProcessLine(std::string_view raw, std::int64_t line_no,
                          const std::vector<int>& keyword_ids) {
  const std::string_view line = UnshapeLine(raw, unshaped_);
  std::vector<int> after_sigs, main_sigs;
  for (int kid : keyword_ids) {
    for (const KeywordTarget& t : kb_.keyword_targets()[static_cast<std::size_t>(kid)]) {
      (t.is_after ? after_sigs : main_sigs).push_back(t.signature);
    }
  }
  auto unique = [](std::vector<int>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  unique(after_sigs);
  unique(main_sigs);
  for (int sig : after_sigs) {
    const Signature& s = kb_.signatures()[static_cast<std::size_t>(sig)];
    if (s.after && RE2::PartialMatch(line, *s.after))
      after_line_[static_cast<std::size_t>(sig)] = line_no;
  }
  for (int sig : main_sigs) {
    const Signature& s = kb_.signatures()[static_cast<std::size_t>(sig)];
    std::vector<std::pair<std::string, std::string>> extracted;
    auto at = MatchSignature(sig, line, extracted);
    if (!at) continue;
    if (s.after) {
      const std::int64_t a = after_line_[static_cast<std::size_t>(sig)];
      if (a < 0 || line_no - a > s.within || line_no <= a) continue;
    }
    Record(sig, line_no, line, *at, std::move(extracted));
  }
}

std::optional<std::size_t> Scanner::MatchSignature(
    int sig, std::string_view line, std::vector<std::pair<std::string, std::string>>& out) const {
  const Signature& s = kb_.signatures()[static_cast<std::size_t>(sig)];
  for (const auto& re : s.patterns) {
    const int groups = re->NumberOfCapturingGroups();
    std::vector<re2::StringPiece> sub(static_cast<std::size_t>(groups) + 1);
    if (!re->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED,
                   sub.data(), groups + 1)) {
      continue;
    }
    // Named groups in the order they appear in the pattern.
    std::vector<std::pair<int, std::string>> names;
    for (const auto& [name, index] : re->NamedCapturingGroups()) names.emplace_back(index, name);
    std::sort(names.begin(), names.end());
    for (const auto& [index, name] : names) {
      const auto& piece = sub[static_cast<std::size_t>(index)];
      if (piece.data() != nullptr) out.emplace_back(name, std::string(piece.data(), piece.size()));
    }
    auto numeric = [&](const std::string& field) -> std::optional<double> {
      for (const auto& [k, v] : out) {
        if (k == field) return ParseDouble(v);
      }
      return std::nullopt;
    };
    // Bounds apply to the fields this pattern extracted; a pattern without the field passes.
    for (const auto& [field, bound] : s.min_values) {
      auto v = numeric(field);
      if (v && *v < bound) return std::nullopt;
    }
    for (const auto& [field, bound] : s.max_values) {
      auto v = numeric(field);
      if (v && *v > bound) return std::nullopt;
    }
    return static_cast<std::size_t>(sub[0].data() - line.data());
  }
  return std::nullopt;
}

void Scanner::Record(int sig, std::int64_t line_no, std::string_view line, std::size_t match_at,
                     std::vector<std::pair<std::string, std::string>> extracted) {
  SignatureHits& h = hits_[static_cast<std::size_t>(sig)];
  ++h.count;
  // A long line is shown around the match, not from its start.
  std::string text;
  if (line.size() <= kEvidenceBytes || match_at < kEvidenceBytes / 4) {
    text = std::string(line.substr(0, kEvidenceBytes));
  } else {
    text = "..." + std::string(line.substr(match_at - kEvidenceBytes / 4, kEvidenceBytes - 3));
  }
  Occurrence occ{file_index_, line_no, std::move(text), std::move(extracted)};
  if (h.first.size() < kKeptOccurrences) h.first.push_back(occ);
  h.last = std::move(occ);
}

std::vector<int> Scanner::MatchOne(std::string_view line) {
  std::vector<int> out;
  raw_hits_.clear();
  if (scratch_ != nullptr) {
    hs_scan(kb_.database(), line.data(), static_cast<unsigned>(line.size()), 0, scratch_, OnHit,
            &raw_hits_);
  }
  std::vector<int> sigs;
  for (const auto& [kid, to] : raw_hits_) {
    for (const KeywordTarget& t : kb_.keyword_targets()[kid]) {
      if (!t.is_after) sigs.push_back(t.signature);
    }
  }
  std::sort(sigs.begin(), sigs.end());
  sigs.erase(std::unique(sigs.begin(), sigs.end()), sigs.end());
  for (int sig : sigs) {
    std::vector<std::pair<std::string, std::string>> extracted;
    if (MatchSignature(sig, line, extracted)) out.push_back(sig);
  }
  return out;
}

}  // namespace tpudoctor::logs

#include "tpudoctor/support/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace tpudoctor {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

std::string CrlfToLf(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!(s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n')) out += s[i];
  }
  return out;
}

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> out = Split(s, '\n');
  if (!out.empty() && out.back().empty()) out.pop_back();
  for (auto& line : out) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> ParseInt64(std::string_view s) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> ParseDouble(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return v;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string Plural(std::int64_t n, std::string_view singular, std::string_view plural) {
  return std::to_string(n) + " " + std::string(n == 1 ? singular : plural);
}

namespace {

// Lower case without `-` and `_`: `tpuv5e`, `TPU-v5e` and `tpu_v5e` are the same word.
std::string Folded(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Whether two words differ only in digits (`tpu-v9` and `tpu-v2`): another version, not a slip of
// the keyboard, so no suggestion.
bool OnlyDigitsDiffer(std::string_view a, std::string_view b) {
  if (a.size() != b.size() || a == b) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool digits = std::isdigit(static_cast<unsigned char>(a[i])) &&
                        std::isdigit(static_cast<unsigned char>(b[i]));
    if (a[i] != b[i] && !digits) return false;
  }
  return true;
}

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring).
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  constexpr std::size_t kMaxWord = 64;  // suggestions are for typing slips, not for essays
  const std::string w = Folded(word.substr(0, kMaxWord));
  if (w.empty()) return std::nullopt;
  const std::size_t limit = std::max<std::size_t>(1, w.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    const std::string f = Folded(c);
    if (f.empty() || OnlyDigitsDiffer(w, f)) continue;
    const std::size_t distance = EditDistance(w, f.substr(0, kMaxWord));
    if (distance < best_distance) {
      best = c;
      best_distance = distance;
    }
  }
  if (best) return best;
  // A known name run together with more letters: `--batchsize`, `--targetv5e`.
  std::optional<std::string> prefix;
  for (const std::string& c : candidates) {
    const std::string f = Folded(c);
    if (f.size() >= 3 && w.starts_with(f) && (!prefix || f.size() > Folded(*prefix).size())) {
      prefix = c;
    }
  }
  return prefix;
}

std::string SanitizeText(std::string_view s) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\t') {
        out += kReplacement;
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // Length and minimum value of the sequence this lead byte starts.
    std::size_t len = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    }
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += kReplacement;
      ++i;
    }
  }
  return out;
}

std::string FormatFixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string FormatGiB(double bytes) {
  return FormatFixed(bytes / (1024.0 * 1024 * 1024), 2) + " GiB";
}

std::string FormatBytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) return FormatGiB(bytes);
  if (bytes >= 1024.0 * 1024) return FormatFixed(bytes / (1024.0 * 1024), 1) + " MiB";
  return FormatFixed(bytes / 1024.0, 1) + " KiB";
}

std::string FormatMs(double ms) {
  return ms >= 100 ? FormatFixed(ms, 0) : ms >= 10 ? FormatFixed(ms, 1) : FormatFixed(ms, 2);
}

}  // namespace tpudoctor

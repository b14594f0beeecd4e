// Small string helpers used across the library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpudoctor {

std::vector<std::string_view> Split(std::string_view s, char sep);
std::vector<std::string_view> SplitLines(std::string_view s);  // strips a trailing '\r'
std::string_view Trim(std::string_view s);
std::string AsciiLower(std::string_view s);  // ASCII letters lower-cased, other bytes kept
std::string AsciiUpper(std::string_view s);
// `s` with its CRLF line ends turned into LF (files checked out on Windows); lone CRs stay.
std::string CrlfToLf(std::string_view s);
std::optional<std::int64_t> ParseInt64(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
// "1 op" / "3 ops"
std::string Plural(std::int64_t n, std::string_view singular, std::string_view plural);
// The candidate a mistyped `word` most likely meant, for "did you mean ...?": the closest by edit
// distance (insertions, deletions, substitutions and swaps of neighbours; case, `-` and `_`
// ignored), within a third of the word's length (at least 1), or a candidate the word starts with
// (`--batchsize` → `--batch`). Nullopt when none is that close.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);
// Valid UTF-8 with control characters (other than tab) and invalid bytes replaced by U+FFFD.
std::string SanitizeText(std::string_view s);
// Fixed formatting with `digits` decimals, locale-independent.
std::string FormatFixed(double v, int digits);
// "12.00 GiB": always in GiB with two decimals (memory findings compare against HBM in GiB).
std::string FormatGiB(double bytes);
// "143.8 MiB", "2.00 GiB", "192.0 KiB": the largest unit that keeps the number at 1 or more.
std::string FormatBytes(double bytes);
// Milliseconds with 2, 1 or 0 decimals as the value grows ("0.13", "12.6", "512").
std::string FormatMs(double ms);

}  // namespace tpudoctor

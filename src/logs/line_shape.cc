#include "src/logs/line_shape.h"

#include <cctype>

namespace tpudoctor::logs {
namespace {

bool Digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Length of a run of digits at `s[i]`.
std::size_t Digits(std::string_view s, std::size_t i) {
  std::size_t n = 0;
  while (i + n < s.size() && Digit(s[i + n])) ++n;
  return n;
}

// `10.164.0.3 [1] ` or `10.164.0.3 [1]: ` (a command run on every worker of a slice).
std::size_t WorkerAddressPrefix(std::string_view s) {
  std::size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    const std::size_t n = Digits(s, i);
    if (n == 0 || n > 3) return 0;
    i += n;
    if (part < 3) {
      if (i >= s.size() || s[i] != '.') return 0;
      ++i;
    }
  }
  if (s.substr(i, 2) != " [") return 0;
  i += 2;
  const std::size_t n = Digits(s, i);
  if (n == 0 || i + n >= s.size() || s[i + n] != ']') return 0;
  i += n + 1;
  if (i < s.size() && s[i] == ':') ++i;
  if (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// `[worker-3] `, `[worker3]: `.
std::size_t WorkerNamePrefix(std::string_view s) {
  if (!s.starts_with("[worker")) return 0;
  std::size_t i = 7;
  if (i < s.size() && (s[i] == '-' || s[i] == '_')) ++i;
  const std::size_t n = Digits(s, i);
  if (n == 0 || i + n >= s.size() || s[i + n] != ']') return 0;
  i += n + 1;
  if (i < s.size() && s[i] == ':') ++i;
  if (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// Kaggle's viewer: `12.3s 45 ` (seconds since start, then the line number).
std::size_t KagglePrefix(std::string_view s) {
  std::size_t i = Digits(s, 0);
  if (i == 0) return 0;
  if (i < s.size() && s[i] == '.') i += 1 + Digits(s, i + 1);
  if (i >= s.size() || s[i] != 's') return 0;
  ++i;
  const std::size_t spaces = s.find_first_not_of(' ', i);
  if (spaces == std::string_view::npos || spaces == i) return 0;
  const std::size_t n = Digits(s, spaces);
  if (n == 0 || spaces + n >= s.size() || s[spaces + n] != ' ') return 0;
  return spaces + n + 1;
}

// Colab's runtime-log viewer: `Nov 23, 2026, 3:45:18 AM<TAB>WARNING<TAB>` (date, time, level).
std::size_t ColabPrefix(std::string_view s) {
  if (s.size() < 24 || !std::isupper(static_cast<unsigned char>(s[0])) ||
      !std::islower(static_cast<unsigned char>(s[1])) ||
      !std::islower(static_cast<unsigned char>(s[2])) || s[3] != ' ')
    return 0;
  const std::string_view head = s.substr(0, 33);  // `Mon DD, YYYY, HH:MM:SS AM` fits
  std::size_t ampm = head.find(" AM", 4);
  if (ampm == std::string_view::npos) ampm = head.find(" PM", 4);
  if (ampm == std::string_view::npos || s.substr(4, ampm - 4).find(':') == std::string_view::npos)
    return 0;
  std::size_t i = ampm + 3;
  while (i < s.size() && (s[i] == '\t' || s[i] == ' ')) ++i;
  for (std::string_view level : {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}) {
    if (s.substr(i).starts_with(level)) {
      i += level.size();
      while (i < s.size() && (s[i] == '\t' || s[i] == ' ')) ++i;
      break;
    }
  }
  return i;
}

// pytest's `E   ` in front of the failing test's output.
std::size_t PytestPrefix(std::string_view s) {
  if (s.size() < 3 || s[0] != 'E' || s[1] != ' ' || s[2] != ' ') return 0;
  const std::size_t i = s.find_first_not_of(' ', 1);
  return i == std::string_view::npos ? 0 : i;
}

// A date and time, then a worker's address: `2021-05-03 10:11:12 10.164.0.3 [3] ` (a slice-wide
// command's output saved with timestamps). Only together: a date alone starts TensorFlow's own
// log lines, which the fatal-line marker reads as they are.
std::size_t DatedWorkerPrefix(std::string_view s) {
  if (s.size() < 11 || Digits(s, 0) != 4 || s[4] != '-' || Digits(s, 5) != 2 || s[7] != '-' ||
      Digits(s, 8) != 2 || (s[10] != ' ' && s[10] != 'T')) {
    return 0;
  }
  std::size_t i = 11;
  while (i < s.size() && (Digit(s[i]) || s[i] == ':' || s[i] == '.' || s[i] == ',')) ++i;
  if (i < s.size() && s[i] == 'Z') ++i;
  while (i < s.size() && s[i] == ' ') ++i;
  const std::size_t worker = WorkerAddressPrefix(s.substr(i));
  return worker == 0 ? 0 : i + worker;
}

// A notebook's output pasted with its line numbers glued on: `4859ValueError: ...`. Only digits
// directly followed by an exception's name (a capitalised word ending in Error or Exception).
std::size_t GluedLineNumber(std::string_view s) {
  const std::size_t n = Digits(s, 0);
  if (n == 0 || n >= s.size() || !std::isupper(static_cast<unsigned char>(s[n]))) return 0;
  std::size_t j = n;
  while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
  const std::string_view word = s.substr(n, j - n);
  return word.ends_with("Error") || word.ends_with("Exception") ? n : 0;
}

// Markdown's backticks around a pasted line: `` `RuntimeError: ...` `` or a fence's opening.
std::size_t Backticks(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && i < 3 && s[i] == '`') ++i;
  return i;
}

}  // namespace

std::string_view UnshapeLine(std::string_view line, std::string& buffer) {
  std::string_view s = line;
  if (s.find('\x1b') != std::string_view::npos) {
    buffer.clear();
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
        std::size_t j = i + 2;  // CSI: parameters, then one final letter
        while (j < s.size() && (Digit(s[j]) || s[j] == ';' || s[j] == '?')) ++j;
        i = j < s.size() ? j : s.size();
        continue;
      }
      buffer.push_back(s[i]);
    }
    s = buffer;
  }
  for (int round = 0; round < 3; ++round) {  // prefixes can stack: a worker's pytest output
    std::size_t cut = WorkerAddressPrefix(s);
    if (cut == 0) cut = DatedWorkerPrefix(s);
    if (cut == 0) cut = WorkerNamePrefix(s);
    if (cut == 0) cut = KagglePrefix(s);
    if (cut == 0) cut = ColabPrefix(s);
    if (cut == 0) cut = PytestPrefix(s);
    if (cut == 0) cut = GluedLineNumber(s);
    if (cut == 0) cut = Backticks(s);
    if (cut == 0) break;
    s.remove_prefix(cut);
  }
  while (!s.empty() && s.back() == '`') s.remove_suffix(1);
  return s;
}

}  // namespace tpudoctor::logs

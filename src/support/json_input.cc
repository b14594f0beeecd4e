#include "src/support/json_input.h"

#include <algorithm>
#include <cstdint>

namespace tpudoctor {
namespace {

// The deepest [ / { nesting outside strings.
int NestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > kMaxJsonDepth) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// "line L, column C" (1-based) of a byte index of a text.
std::string LineAndColumn(std::string_view text, std::size_t byte) {
  const std::string_view before = text.substr(0, std::min(byte, text.size()));
  const std::size_t newline = before.rfind('\n');
  const std::size_t column =
      newline == std::string_view::npos ? before.size() : before.size() - newline - 1;
  return "line " + std::to_string(1 + std::count(before.begin(), before.end(), '\n')) +
         ", column " + std::to_string(column + 1);
}

}  // namespace

Result<nlohmann::json> ParseJsonInput(std::string_view text, const std::string& what) {
  if (NestingDepth(text) > kMaxJsonDepth) {
    return MakeError(what + ": JSON nested more than " + std::to_string(kMaxJsonDepth) +
                     " levels deep");
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts from 1: the character the parser stopped at.
    return MakeError(what + ": invalid JSON at byte " + std::to_string(e.byte) + " (" +
                     LineAndColumn(text, e.byte > 0 ? e.byte - 1 : 0) +
                     (e.byte >= text.size() ? "; truncated?" : "") + ")");
  } catch (const std::exception&) {
    return MakeError(what + ": invalid JSON");
  }
}

const nlohmann::json* Member(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string StringMember(const nlohmann::json& j, std::string_view key) {
  const nlohmann::json* m = Member(j, key);
  return m != nullptr && m->is_string() ? m->get<std::string>() : std::string();
}

std::optional<std::int64_t> IntMember(const nlohmann::json& j, std::string_view key) {
  const nlohmann::json* m = Member(j, key);
  if (m == nullptr || !m->is_number_integer()) return std::nullopt;
  if (m->is_number_unsigned() && m->get<std::uint64_t>() > INT64_MAX) return std::nullopt;
  return m->get<std::int64_t>();
}

}  // namespace tpudoctor

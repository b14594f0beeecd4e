#include "src/support/yaml_input.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

namespace tpudoctor {
namespace {

using nlohmann::json;

// The deepest nesting the text can make: flow brackets outside quotes, plus block indentation
// (each deeper indentation level opens one more collection).
int NestingDepth(std::string_view text) {
  int flow = 0, deepest = 0;
  char quote = 0;
  std::vector<std::size_t> indents;
  std::size_t line_start = 0;
  bool at_line_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (at_line_start && c != ' ' && c != '\n' && c != '\r' && c != '#') {
      const std::size_t indent = i - line_start;
      while (!indents.empty() && indents.back() > indent) indents.pop_back();
      if (indents.empty() || indents.back() < indent) indents.push_back(indent);
      // "- - - x" opens a sequence per dash on one line.
      std::size_t dashes = 0;
      for (std::size_t j = i; j + 1 < text.size() && text[j] == '-' && text[j + 1] == ' '; j += 2) {
        ++dashes;
        while (j + 2 < text.size() && text[j + 2] == ' ') ++j;
      }
      deepest = std::max(deepest, static_cast<int>(indents.size() + dashes) + flow);
      at_line_start = false;
    }
    if (c == '\n') {
      line_start = i + 1;
      at_line_start = true;
      quote = 0;  // plain YAML strings do not span lines in the files we read; be conservative
      continue;
    }
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, static_cast<int>(indents.size()) + ++flow);
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
    }
    if (deepest > kMaxYamlDepth) return deepest;
  }
  return deepest;
}

// A plain scalar typed by YAML 1.2's core schema (with the `1_000` digit groups YAML 1.1 allows,
// which MaxText configs use).
json PlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::string digits;
  for (char c : s) {
    if (c != '_') digits += c;
  }
  std::int64_t i = 0;
  const char* end = digits.data() + digits.size();
  const char* begin = digits.data() + (digits[0] == '+' ? 1 : 0);
  if (auto [p, ec] = std::from_chars(begin, end, i); ec == std::errc() && p == end) return i;
  double d = 0;
  if (auto [p, ec] = std::from_chars(begin, end, d);
      ec == std::errc() && p == end && std::isfinite(d) &&
      digits.find_first_of("0123456789") != std::string::npos) {
    return d;
  }
  return s;
}

json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      // A quoted scalar is a string whatever it spells ("8" stays "8").
      return node.Tag() == "!" ? json(node.Scalar()) : PlainScalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(ToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        const YAML::Node& key = kv.first;
        out[key.IsScalar() ? key.Scalar() : YAML::Dump(key)] = ToJson(kv.second);
      }
      return out;
    }
  }
  return nullptr;
}

}  // namespace

Result<json> ParseYamlInput(std::string_view text, const std::string& what) {
  if (text.size() > kMaxYamlBytes) {
    return MakeError(what + ": " + std::to_string(text.size() >> 10) +
                     " KiB of YAML, more than the " + std::to_string(kMaxYamlBytes >> 20) +
                     " MiB a config or job file can be");
  }
  if (text.find('\0') != std::string_view::npos)
    return MakeError(what + ": binary data, expected YAML text");
  if (NestingDepth(text) > kMaxYamlDepth) {
    return MakeError(what + ": YAML nested more than " + std::to_string(kMaxYamlDepth) +
                     " levels deep");
  }
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
    std::erase_if(docs, [](const YAML::Node& d) { return d.IsNull() || !d.IsDefined(); });
    if (docs.empty()) return MakeError(what + ": no YAML document in the file");
    if (docs.size() == 1) return ToJson(docs[0]);
    json out = json::array();
    for (const auto& d : docs) out.push_back(ToJson(d));
    return out;
  } catch (const YAML::Exception& e) {
    return MakeError(what + ": invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " +
                     e.msg);
  } catch (const std::exception&) {
    return MakeError(what + ": invalid YAML");
  }
}

}  // namespace tpudoctor

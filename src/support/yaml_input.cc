#include "src/support/yaml_input.h"

#include <yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tpudoctor {
namespace {

using nlohmann::json;

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
  if (digits.empty()) return s;
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

// Builds JSON from libyaml's events with an explicit stack (no recursion, however deep the
// text), and charges every node to a budget as it is made: an alias costs what the anchored
// node cost, so a billion-laughs file is refused once its copies would pass kMaxYamlCost, never
// expanded.
class Builder {
 public:
  explicit Builder(const std::string& what) : what_(what) {}

  // Feeds one event; an error ends the parse.
  Result<Ok> Feed(const yaml_event_t& e) {
    switch (e.type) {
      case YAML_DOCUMENT_END_EVENT:
        documents_.push_back(std::move(document_));
        document_ = nullptr;
        anchors_.clear();  // anchors are scoped to their document
        return Ok{};
      case YAML_SCALAR_EVENT:
        return Scalar(e);
      case YAML_SEQUENCE_START_EVENT:
        return Open(json::array(), Text(e.data.sequence_start.anchor), e);
      case YAML_MAPPING_START_EVENT:
        return Open(json::object(), Text(e.data.mapping_start.anchor), e);
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        return Close();
      case YAML_ALIAS_EVENT:
        return Alias(e);
      default:
        return Ok{};
    }
  }

  std::vector<json>& documents() { return documents_; }

 private:
  struct Frame {
    json value;
    std::string anchor;
    std::uint64_t cost_before = 0;   // budget spent when the collection opened
    std::optional<std::string> key;  // a mapping's key waiting for its value
  };
  struct Anchored {
    json value;
    std::uint64_t cost = 0;
  };

  static std::string Text(const yaml_char_t* s) {
    return s == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(s));
  }

  Error Fail(const yaml_event_t& e, const std::string& why) const {
    return MakeError(what_ + ": " + why + " (line " + std::to_string(e.start_mark.line + 1) + ")");
  }

  Result<Ok> Charge(const yaml_event_t& e, std::uint64_t cost) {
    cost_ += cost;
    if (cost_ > kMaxYamlCost) {
      return Fail(e,
                  "the YAML expands to more than " + std::to_string(kMaxYamlCost >> 20) +
                      " MiB of values (aliases of aliases?), more than a config or job file holds");
    }
    return Ok{};
  }

  Result<Ok> Scalar(const yaml_event_t& e) {
    const auto& s = e.data.scalar;
    std::string text(reinterpret_cast<const char*>(s.value), s.length);
    if (auto c = Charge(e, kNodeCost + text.size()); !c) return c;
    // A quoted (or !!str-tagged) scalar is a string whatever it spells ("8" stays "8").
    const bool plain =
        s.style == YAML_PLAIN_SCALAR_STYLE && s.plain_implicit && Text(s.tag) != YAML_STR_TAG;
    json value = plain ? PlainScalar(text) : json(text);
    if (const std::string anchor = Text(s.anchor); !anchor.empty())
      anchors_[anchor] = {value, kNodeCost + text.size()};
    return Add(std::move(value), &text);
  }

  Result<Ok> Open(json value, std::string anchor, const yaml_event_t& e) {
    if (stack_.size() >= static_cast<std::size_t>(kMaxYamlDepth)) {
      return Fail(e, "YAML nested more than " + std::to_string(kMaxYamlDepth) + " levels deep");
    }
    if (auto c = Charge(e, kNodeCost); !c) return c;
    stack_.push_back({std::move(value), std::move(anchor), cost_ - kNodeCost, std::nullopt});
    return Ok{};
  }

  Result<Ok> Close() {
    Frame done = std::move(stack_.back());
    stack_.pop_back();
    if (!done.anchor.empty()) anchors_[done.anchor] = {done.value, cost_ - done.cost_before};
    return Add(std::move(done.value), nullptr);
  }

  Result<Ok> Alias(const yaml_event_t& e) {
    const std::string name = Text(e.data.alias.anchor);
    auto it = anchors_.find(name);
    if (it == anchors_.end()) return Fail(e, "alias `*" + name + "` names no anchor before it");
    if (auto c = Charge(e, it->second.cost); !c) return c;
    return Add(it->second.value, nullptr);
  }

  // Puts a finished node where it belongs: the document, the sequence, or a mapping's key or
  // value. A scalar key keeps its text as written; any other key becomes its JSON text.
  Result<Ok> Add(json value, const std::string* scalar_text) {
    if (stack_.empty()) {
      document_ = std::move(value);
      return Ok{};
    }
    Frame& top = stack_.back();
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
    } else if (!top.key) {
      top.key = scalar_text != nullptr ? *scalar_text : value.dump();
    } else {
      top.value[*top.key] = std::move(value);
      top.key.reset();
    }
    return Ok{};
  }

  // What a node costs before its text: about what nlohmann::json holds per value.
  static constexpr std::uint64_t kNodeCost = 32;

  const std::string& what_;
  std::vector<Frame> stack_;
  std::map<std::string, Anchored> anchors_;
  json document_;
  std::vector<json> documents_;
  std::uint64_t cost_ = 0;
};

// Owns a libyaml parser over `text`.
class Parser {
 public:
  explicit Parser(std::string_view text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                   text.size());
    }
  }
  ~Parser() {
    if (ok_) yaml_parser_delete(&parser_);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
  bool ok() const { return ok_; }
  yaml_parser_t* get() { return &parser_; }

 private:
  yaml_parser_t parser_{};
  bool ok_ = false;
};
}  // namespace

Result<json> ParseYamlInput(std::string_view text, const std::string& what) {
  if (text.size() > kMaxYamlBytes) {
    return MakeError(what + ": " + std::to_string(text.size() >> 10) +
                     " KiB of YAML, more than the " + std::to_string(kMaxYamlBytes >> 20) +
                     " MiB a config or job file can be");
  }
  if (text.find('\0') != std::string_view::npos)
    return MakeError(what + ": binary data, expected YAML text");
  Parser parser(text);
  if (!parser.ok()) return MakeError(what + ": out of memory starting the YAML parser");
  Builder builder(what);
  for (;;) {
    yaml_event_t event;
    if (yaml_parser_parse(parser.get(), &event) == 0) {
      const yaml_parser_t& p = *parser.get();
      const std::string problem = p.problem != nullptr ? p.problem : "unreadable text";
      if (p.error == YAML_MEMORY_ERROR) return MakeError(what + ": out of memory reading YAML");
      return MakeError(what + ": invalid YAML at line " + std::to_string(p.problem_mark.line + 1) +
                       ": " + problem);
    }
    const bool end = event.type == YAML_STREAM_END_EVENT;
    auto fed = builder.Feed(event);
    yaml_event_delete(&event);
    if (!fed) return fed.error();
    if (end) break;
  }
  std::vector<json>& docs = builder.documents();
  std::erase_if(docs, [](const json& d) { return d.is_null(); });
  if (docs.empty()) return MakeError(what + ": no YAML document in the file");
  if (docs.size() == 1) return std::move(docs[0]);
  return json(std::move(docs));
}

}  // namespace tpudoctor

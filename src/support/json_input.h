// ParseJsonInput: untrusted JSON text → nlohmann::json, for the inputs that are JSON (Keras
// configs, torch.export programs, model configs, notebooks). Refuses nesting deeper than kMaxJsonDepth before parsing (the
// parser is recursive), and reports malformed text as one line with the byte offset and its line
// and column. Never throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tpudoctor/support/result.h"

namespace tpudoctor {

inline constexpr int kMaxJsonDepth = 256;

// `what` names the document in errors ("model.json").
Result<nlohmann::json> ParseJsonInput(std::string_view text, const std::string& what);

// Accessors that never throw: the member, or nullptr when `j` is not an object or lacks it.
const nlohmann::json* Member(const nlohmann::json& j, std::string_view key);
std::string StringMember(const nlohmann::json& j, std::string_view key);
std::optional<std::int64_t> IntMember(const nlohmann::json& j, std::string_view key);

}  // namespace tpudoctor

// ParseYamlInput: untrusted YAML text (a MaxText model config, a Vertex AI CustomJob spec, a GKE
// manifest) → nlohmann::json, so every reader downstream uses the same never-throwing accessors
// as for JSON (json_input.h). yaml-cpp does the parsing; this wrapper refuses what would make a
// recursive parser run away before handing it the text (more than kMaxYamlDepth levels of flow or
// block nesting, more than kMaxYamlBytes), turns its exceptions into one-line errors with the line
// number, and types plain scalars the way YAML 1.2's core schema does (integers, floats, booleans,
// null; everything else a string). A multi-document stream yields an array of documents.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tpudoctor/support/result.h"

namespace tpudoctor {

inline constexpr int kMaxYamlDepth = 64;
inline constexpr std::uint64_t kMaxYamlBytes = std::uint64_t{4} << 20;

// `what` names the document in errors ("job.yaml"). Empty text or a stream of empty documents is
// an error ("no YAML document").
Result<nlohmann::json> ParseYamlInput(std::string_view text, const std::string& what);

}  // namespace tpudoctor

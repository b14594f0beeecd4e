// ParseYamlInput: untrusted YAML text (a MaxText model config, a Vertex AI CustomJob spec, a GKE
// manifest) → nlohmann::json, so every reader downstream uses the same never-throwing accessors
// as for JSON (json_input.h). libyaml (the C parser PyYAML uses) turns the text into events and
// the JSON is built from them with an explicit stack, under a budget: at most kMaxYamlBytes of
// text, kMaxYamlDepth levels of nesting, and kMaxYamlCost bytes of values once aliases are
// expanded, each alias charged what its anchor cost when it is met — so a "billion laughs" file is
// refused after a few MiB, never expanded. (yaml-cpp, used before, expands aliases only while the
// tree is walked, and its 0.7 scanner grows without bound on a lone `,`.) Plain scalars are typed
// the way YAML 1.2's core schema does (integers, floats, booleans, null; everything else a
// string). A multi-document stream yields an array of documents; errors are one line with the
// line number.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tpudoctor/support/result.h"

namespace tpudoctor {

inline constexpr int kMaxYamlDepth = 64;
inline constexpr std::uint64_t kMaxYamlBytes = std::uint64_t{4} << 20;
inline constexpr std::uint64_t kMaxYamlCost = std::uint64_t{16} << 20;

// `what` names the document in errors ("job.yaml"). Empty text or a stream of empty documents is
// an error ("no YAML document").
Result<nlohmann::json> ParseYamlInput(std::string_view text, const std::string& what);

}  // namespace tpudoctor

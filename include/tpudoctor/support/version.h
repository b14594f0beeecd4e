// The tool's version, as every report, log diagnosis and `--version` prints it.
#pragma once

namespace tpudoctor {

inline constexpr const char* kToolVersion = "0.1.0";

}  // namespace tpudoctor

// The tpu-doctor command line, as a function so tests can run it in-process.
//
// Exit codes: 0 clean (or findings below --fail-on), 1 findings at or above --fail-on, 2 usage or
// input error (one line on stderr, nothing on stdout).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tpudoctor::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitUsage = 2;

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tpudoctor::cli

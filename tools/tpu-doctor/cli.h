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

// Where the output goes: colour is used only when stdout is a terminal and NO_COLOR is unset.
struct Terminal {
  bool stdout_is_tty = false;
  bool no_color = false;  // NO_COLOR is set (https://no-color.org)
  // main(): the process exits once Run returns, so a loaded model need not be freed.
  bool exits_after_run = false;
};

// main(): how the process allocates (tools/tpu-doctor/allocator.cc).
void TuneAllocator();
// A sanitizer build, whose leak check must find nothing left allocated at exit.
bool LeakCheckedBuild();

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const Terminal& terminal = {});

}  // namespace tpudoctor::cli

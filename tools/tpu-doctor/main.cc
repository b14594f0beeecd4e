// tpu-doctor: will this model run on a Cloud TPU, and if not, exactly why?
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  tpudoctor::cli::TuneAllocator();
  std::vector<std::string> args(argv + 1, argv + argc);
  tpudoctor::cli::Terminal terminal;
  terminal.stdout_is_tty = ::isatty(STDOUT_FILENO) == 1;
  const char* no_color = std::getenv("NO_COLOR");
  terminal.no_color = no_color != nullptr && no_color[0] != '\0';
  terminal.exits_after_run = !tpudoctor::cli::LeakCheckedBuild();
  // The library reports bad input as errors, never by throwing; what is left is running out of
  // memory (an allocation a size check did not foresee). It gets the same one line and exit 2,
  // and stdout stays empty: Run writes its output only once it is complete.
  std::ostringstream out;
  int code = tpudoctor::cli::kExitUsage;
  try {
    code = tpudoctor::cli::Run(args, out, std::cerr, terminal);
  } catch (const std::bad_alloc&) {
    std::cerr << "tpu-doctor: out of memory while reading the input; it is larger or more deeply "
                 "nested than a model, config or log can be\n";
    return tpudoctor::cli::kExitUsage;
  }
  std::cout << out.str();
  return code;
}

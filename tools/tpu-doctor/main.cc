// tpu-doctor: will this model run on a Cloud TPU, and if not, exactly why?
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  tpudoctor::cli::Terminal terminal;
  terminal.stdout_is_tty = ::isatty(STDOUT_FILENO) == 1;
  const char* no_color = std::getenv("NO_COLOR");
  terminal.no_color = no_color != nullptr && no_color[0] != '\0';
  return tpudoctor::cli::Run(args, std::cout, std::cerr, terminal);
}

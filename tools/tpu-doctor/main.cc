// tpu-doctor: will this model run on a Cloud TPU, and if not, exactly why?
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return tpudoctor::cli::Run(args, std::cout, std::cerr);
}

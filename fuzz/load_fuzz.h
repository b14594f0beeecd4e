// Shared body of the libFuzzer targets: load the bytes as one format, and when they load, run every
// check on the graph, so a fuzzed input exercises the IR and the rules as well as the parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tpudoctor/check/check.h"
#include "tpudoctor/frontend/frontend.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor::fuzz {

template <typename Loader>
int LoadAndCheck(const std::uint8_t* data, std::size_t size, const char* name, Loader load) {
  Source source{name, std::string(reinterpret_cast<const char*>(data), size)};
  auto model = load(source, ShapeOptions{});
  if (model.ok()) (void)RunChecks(model->graph, **FindTarget(kDefaultTarget));
  return 0;
}

}  // namespace tpudoctor::fuzz

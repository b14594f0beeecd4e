// libFuzzer entry of the `pt2` target (fuzz/fuzz_targets.h); scripts/fuzz.sh pt2 SECONDS runs it.
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::RunTarget("pt2", data, size);
}

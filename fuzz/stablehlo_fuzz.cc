// libFuzzer entry of the `stablehlo` target (fuzz/fuzz_targets.h); scripts/fuzz.sh stablehlo
// SECONDS runs it.
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::RunTarget("stablehlo", data, size);
}

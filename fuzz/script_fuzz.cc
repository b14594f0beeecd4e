// libFuzzer entry of the `script` target (fuzz/fuzz_targets.h); scripts/fuzz.sh script SECONDS runs
// it.
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::RunTarget("script", data, size);
}

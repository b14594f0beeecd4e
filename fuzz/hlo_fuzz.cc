// libFuzzer entry of the `hlo` target (fuzz/fuzz_targets.h); scripts/fuzz.sh hlo SECONDS runs it.
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::RunTarget("hlo", data, size);
}

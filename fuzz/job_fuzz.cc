// libFuzzer entry of the `job` target (fuzz/fuzz_targets.h); scripts/fuzz.sh job SECONDS runs it.
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tpudoctor::fuzz::RunTarget("job", data, size);
}
